import { paletteFor } from '../../render/colors.js';
import { resolveOutputFormat, UnknownFormatError } from '../../render/output-format.js';
import { printFields, printJson } from '../../render/record.js';
import { createRowWriter } from '../../render/rows.js';
import type { CommandContext } from '../context.js';
import { EXIT, usageError } from '../exit-codes.js';
import { downloadResult, type ResultFile } from '../query/download.js';
import { followJob, type JobObject } from './follow.js';

interface JobList {
  object: 'list';
  data: JobObject[];
  has_more: boolean;
  next_cursor: string | null;
}

const when = (seconds: number | null): string => (seconds === null ? '' : new Date(seconds * 1000).toISOString().replace('.000Z', 'Z'));
const path = (id: string, rest = ''): string => `/jobs/${encodeURIComponent(id)}${rest}`;

/** 0 succeeded, 1 failed or cancelled, 3 not finished. */
export function exitCodeForJob(job: JobObject): number {
  if (job.status === 'succeeded') return EXIT.ok;
  if (job.status === 'failed' || job.status === 'cancelled') return EXIT.failed;
  return EXIT.stillRunning;
}

function jobFields(job: JobObject): [string, unknown][] {
  return [
    ['id', job.id],
    ['kind', job.kind],
    ['status', job.status],
    ['created', when(job.created)],
    ['started', when(job.started)],
    ['finished', when(job.finished)],
    ...(job.error ? ([['error', `${job.error.code}: ${job.error.message}`]] as [string, unknown][]) : []),
  ];
}

export async function listJobs(ctx: CommandContext, options: { limit: string; all?: boolean; output?: string }): Promise<void> {
  const limit = Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw usageError('--limit must be a whole number from 1 to 100.');
  let format;
  try {
    format = resolveOutputFormat(ctx.io, { json: ctx.json, flag: options.output, env: ctx.env.LAKE_OUTPUT });
  } catch (error) {
    if (error instanceof UnknownFormatError) throw usageError(error.message);
    throw error;
  }
  const client = await ctx.client();
  const writer = ctx.json ? undefined : createRowWriter(format, ctx.io.stdout, paletteFor(ctx.io, 'stdout'));
  writer?.begin(['id', 'kind', 'status', 'created', 'finished', 'error']);
  const all: JobObject[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.get<JobList>('/jobs', { limit, starting_after: cursor });
    if (writer) writer.write(page.data.map((j) => ({ id: j.id, kind: j.kind, status: j.status, created: when(j.created), finished: when(j.finished), error: j.error?.code ?? null })));
    else all.push(...page.data);
    cursor = options.all && page.has_more && page.next_cursor ? page.next_cursor : undefined;
  } while (cursor);
  writer?.end();
  // Several pages print as one JSON document, never as one document per page.
  if (!writer) printJson(ctx.io, { object: 'list', data: all, has_more: false, next_cursor: null });
}

export async function getJob(ctx: CommandContext, id: string): Promise<void> {
  const job = await (await ctx.client()).get<JobObject>(path(id));
  if (ctx.json) return printJson(ctx.io, job);
  printFields(ctx.io, jobFields(job));
}

export async function waitJob(ctx: CommandContext, id: string, options: { timeout?: string }): Promise<void> {
  const seconds = options.timeout === undefined ? undefined : Number(options.timeout);
  if (seconds !== undefined && (!Number.isFinite(seconds) || seconds < 0)) throw usageError('--timeout must be a number of seconds.');
  const client = await ctx.client();
  const timeout = seconds === undefined ? undefined : new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), seconds * 1000).unref());
  const outcome = await Promise.race([followJob(client, id, () => {}), ...(timeout ? [timeout] : [])]);
  const job = outcome === 'timeout' ? await client.get<JobObject>(path(id)) : outcome;
  if (ctx.json) printJson(ctx.io, job);
  else printFields(ctx.io, jobFields(job));
  ctx.exitCode = exitCodeForJob(job);
}

export async function jobEvents(ctx: CommandContext, id: string): Promise<void> {
  const client = await ctx.client();
  const palette = paletteFor(ctx.io, 'stdout');
  const job = await followJob(client, id, (event) => {
    if (!ctx.io.isStdoutTTY || ctx.json) {
      ctx.io.stdout.write(`${JSON.stringify(event)}\n`);
      return;
    }
    const at = typeof event.data.at === 'number' ? when(event.data.at).slice(11, 19) : '';
    const error = event.data.error as { message?: string } | undefined;
    ctx.io.stdout.write(`${palette.dim(at)} ${palette.bold(event.event)}${error?.message ? `  ${error.message}` : ''}\n`);
  });
  ctx.io.stderr.write(`lake: job ${job.id} ${job.status}${job.error ? `: ${job.error.message}` : ''}\n`);
  ctx.exitCode = exitCodeForJob(job);
}

export async function cancelJob(ctx: CommandContext, id: string): Promise<void> {
  const outcome = (await (await ctx.client()).request<{ job: JobObject; execution_may_continue: boolean }>('POST', path(id, '/cancel'))).body;
  if (ctx.json) return printJson(ctx.io, outcome);
  printFields(ctx.io, [...jobFields(outcome.job), ['execution may continue', outcome.execution_may_continue]]);
}

export async function jobResult(ctx: CommandContext, id: string, output: string | undefined): Promise<void> {
  const client = await ctx.client();
  const fresh = async (): Promise<ResultFile> => {
    const result = await client.get<{ files: ResultFile[] }>(path(id, '/result'));
    const file = result.files[0];
    if (!file) throw usageError(`Job ${id} has no result file.`);
    return file;
  };
  await downloadResult(ctx, client, id, output, fresh);
}
