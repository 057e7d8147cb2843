import { closeSync, createWriteStream, existsSync, openSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { LakeClient } from '../../client/lake-client.js';
import { LakeApiError } from '../../client/errors.js';
import { printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import { QUERY_ROUTES } from '../../contract/routes.js';
import type { ResultFileObject } from '../../contract/types.js';
import { queryEndedError } from './ended.js';

const MAX_ATTEMPTS = 5;

/** A result file as the API lists it (url, bytes, expires). */
export type ResultFile = ResultFileObject;

/** A freshly signed URL each time: links last an hour, and a long or resumed download may outlive one. */
export async function queryResultFile(
  client: LakeClient,
  id: string,
  format: DownloadFormat = 'parquet',
): Promise<ResultFile> {
  const answer = await client.call(QUERY_ROUTES.getQuery, {
    params: { id },
    query: format === 'parquet' ? {} : { file_format: format },
  });
  const query = answer.body;
  if (query.status === 'running' || query.status === 'queued') {
    throw new CliError(
      'query_running',
      `Query ${id} is still running; there is nothing to download yet.`,
      EXIT.stillRunning,
      `Wait with: lake query poll ${id}`,
    );
  }
  const file = query.files?.[0];
  if (query.status !== 'succeeded' || !file)
    throw queryEndedError(query, answer.headers.get('Request-Id') ?? undefined);
  return file;
}

function sizeOf(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

/** The forms `lake query download --format` takes. */
export const DOWNLOAD_FORMATS = ['parquet', 'csv', 'arrow', 'arrow_zstd'] as const;
export type DownloadFormat = (typeof DOWNLOAD_FORMATS)[number];

/** The file name's extension of each form (`.arrows`: the Arrow IPC stream format's own, compressed or not). */
export const extensionOf = (format: DownloadFormat): string => (format.startsWith('arrow') ? 'arrows' : format);

export function downloadFormat(value: string | undefined): DownloadFormat {
  const format = value ?? 'parquet';
  if (!(DOWNLOAD_FORMATS as readonly string[]).includes(format))
    throw usageError(`--format must be one of ${DOWNLOAD_FORMATS.join(', ')}, not '${format.slice(0, 20)}'.`);
  return format as DownloadFormat;
}

export async function downloadQuery(
  ctx: CommandContext,
  id: string,
  output: string | undefined,
  formatName?: string,
): Promise<void> {
  const format = downloadFormat(formatName);
  const client = await ctx.client();
  await downloadResult(ctx, client, id, output ?? `${id}.${extensionOf(format)}`, () =>
    queryResultFile(client, id, format),
  );
}

/**
 * Downloads a Parquet result. Bytes go to `<out>.part` and are resumed with Range after a failure or an expired
 * link (a fresh one comes from `freshFile`); only a file of exactly the announced size is renamed to `<out>`.
 * `-o -` streams to stdout.
 */
export async function downloadResult(
  ctx: CommandContext,
  client: LakeClient,
  id: string,
  output: string | undefined,
  freshFile: () => Promise<ResultFile>,
  /** `quiet`: no line saying what was written (the CLI's own use of a result file). */
  options: { quiet?: boolean } = {},
): Promise<void> {
  const toStdout = output === '-';
  const target = output ?? `${id}.parquet`;
  const partial = `${target}.part`;
  let file = await freshFile();
  if (!toStdout && sizeOf(partial) > file.bytes) unlinkSync(partial);
  let lastProblem = '';
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const have = toStdout ? 0 : sizeOf(partial);
    if (have === file.bytes) break;
    const response = await client
      .fetchUrl(file.url, have > 0 ? { Range: `bytes=${have}-` } : {})
      .catch((error: unknown) => {
        lastProblem = error instanceof Error ? error.message : String(error);
        return undefined;
      });
    if (!response) continue;
    if (response.status === 403) {
      // A 403 without a JSON body is still a refusal; the envelope, when there is one, says more.
      const body = (await response.json().catch(() => undefined)) as unknown;
      const error = LakeApiError.fromResponse(response, body);
      if (error.code !== 'signed_url_expired') throw error;
      file = await freshFile();
      continue;
    }
    if (response.status !== 200 && response.status !== 206)
      // An answer without a JSON body still becomes an error with its status.
      throw LakeApiError.fromResponse(response, await response.json().catch(() => undefined));
    if (!response.body) continue;
    const append = response.status === 206;
    const sink: Writable = toStdout
      ? new Writable({
          write: (chunk, _enc, done) => {
            ctx.io.stdout.write(chunk as Buffer);
            done();
          },
        })
      : createWriteStream(partial, { flags: append ? 'a' : 'w', mode: 0o600 });
    try {
      await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), sink);
    } catch (error) {
      lastProblem = error instanceof Error ? error.message : String(error);
      if (toStdout) throw new CliError('download_failed', `The download broke off: ${lastProblem}`, EXIT.unavailable);
      continue;
    }
    if (toStdout) return;
  }
  if (toStdout) return;
  const have = sizeOf(partial);
  if (have !== file.bytes) {
    throw new CliError(
      'download_incomplete',
      `Got ${have} of ${file.bytes} bytes after ${MAX_ATTEMPTS} attempts${lastProblem ? ` (${lastProblem})` : ''}.`,
      EXIT.unavailable,
      `Run the same command again to resume from ${partial}.`,
    );
  }
  if (!existsSync(partial)) closeSync(openSync(partial, 'w', 0o600));
  renameSync(partial, target);
  if (options.quiet) return;
  if (ctx.json) printJson(ctx.io, { object: 'download', query: id, path: target, bytes: file.bytes });
  else ctx.io.stderr.write(`lake: wrote ${file.bytes} bytes to ${target}\n`);
}
