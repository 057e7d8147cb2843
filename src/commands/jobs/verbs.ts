import { paletteFor } from '../../render/colors.js';
import { printFields, printJson } from '../../render/record.js';
import { JOB_ROUTES } from '../../contract/routes.js';
import type { CommandContext } from '../context.js';
import { EXIT, usageError } from '../exit-codes.js';
import { downloadFormat, downloadResult, extensionOf, type ResultFile } from '../query/download.js';
import { followJob, type JobObject } from './follow.js';
import { oneLine, printList, type PageOptions } from '../listing.js';
import { sinceSeconds } from '../since.js';
import { groupDigits } from '../../support/group-digits.js';

const when = (seconds: number | null): string =>
  seconds === null ? '' : new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/** 0 succeeded, 1 failed or cancelled, 3 not finished. */
export function exitCodeForJob(job: JobObject): number {
  if (job.status === 'succeeded') return EXIT.ok;
  if (job.status === 'failed' || job.status === 'cancelled') return EXIT.failed;
  return EXIT.stillRunning;
}

/** How long a job ran (or has been running): from its start to its end, or to now. */
function duration(job: JobObject): string | null {
  if (job.started === null) return null;
  const seconds = (job.finished ?? Math.floor(Date.now() / 1000)) - job.started;
  if (seconds < 60) return `${seconds} s`;
  return seconds < 3600 ? `${Math.floor(seconds / 60)} min ${seconds % 60} s` : `${(seconds / 3600).toFixed(1)} h`;
}

function jobFields(job: JobObject): [string, unknown][] {
  return [
    ['id', job.id],
    ['kind', job.kind],
    ['status', job.status],
    ['created', when(job.created)],
    ['started', when(job.started)],
    ['finished', when(job.finished)],
    ['duration', duration(job)],
    ...(job.sql !== null ? ([['sql', job.sql]] as [string, unknown][]) : []),
    ...(job.error ? ([['error', `${job.error.code}: ${job.error.message}`]] as [string, unknown][]) : []),
  ];
}

export interface JobListOptions extends PageOptions {
  status?: string;
  kind?: string;
  since?: string;
}

/** `lake jobs ls`: status, kind and since filters; each job's duration, and a query's SQL cut to the terminal. */
export async function listJobs(ctx: CommandContext, options: JobListOptions): Promise<void> {
  const since = options.since === undefined ? undefined : sinceSeconds(options.since);
  // On a terminal the SQL gets what the other columns leave; in a pipe it is whole.
  const sqlWidth = ctx.io.isStdoutTTY ? Math.max(20, ctx.io.terminalWidth - 100) : Number.POSITIVE_INFINITY;
  await printList(ctx, options, {
    route: JOB_ROUTES.listJobs,
    query: { status: options.status, kind: options.kind, since },
    columns: ['id', 'kind', 'status', 'created', 'duration', 'sql', 'error'],
    row: (j) => ({
      id: j.id,
      kind: j.kind,
      status: j.status,
      created: when(j.created),
      duration: duration(j),
      sql: j.sql === null ? null : oneLine(j.sql, sqlWidth),
      error: j.error?.code ?? null,
    }),
  });
}

export async function getJob(ctx: CommandContext, id: string): Promise<void> {
  const job = await (await ctx.client()).read(JOB_ROUTES.getJob, { params: { id } });
  if (ctx.json) return printJson(ctx.io, job);
  printFields(ctx.io, jobFields(job));
}

export async function waitJob(ctx: CommandContext, id: string, options: { timeout?: string }): Promise<void> {
  const seconds = options.timeout === undefined ? undefined : Number(options.timeout);
  if (seconds !== undefined && (!Number.isFinite(seconds) || seconds < 0))
    throw usageError('--timeout must be a number of seconds.');
  const client = await ctx.client();
  const timeout =
    seconds === undefined
      ? undefined
      : new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), seconds * 1000).unref());
  const outcome = await Promise.race([followJob(client, id, () => {}), ...(timeout ? [timeout] : [])]);
  const job = outcome === 'timeout' ? await client.read(JOB_ROUTES.getJob, { params: { id } }) : outcome;
  if (ctx.json) printJson(ctx.io, job);
  else printFields(ctx.io, jobFields(job));
  ctx.exitCode = exitCodeForJob(job);
}

/** What an event says, in a few words: a table's phase and counts, a status, an error. */
function eventDetails(event: { event: string; data: Record<string, unknown> }): string {
  const d = event.data;
  const count = (n: unknown): string => (typeof n === 'number' ? groupDigits(n) : '?');
  if (event.event === 'sync.progress')
    return `${String(d.table)} ${String(d.phase)} ${count(d.completed)}/${d.total === null || d.total === undefined ? '?' : count(d.total)}${typeof d.error === 'string' ? `: ${d.error}` : ''}`;
  if (event.event === 'sync.schema_change') {
    const list = (key: string, sign: string): string[] =>
      ((d[key] as string[] | undefined) ?? []).map((c) => `${sign}${c}`);
    return `${String(d.table)} ${[...list('added', '+'), ...list('dropped', '-'), ...list('retyped', '~')].join(' ')}`;
  }
  const error = d.error as { code?: string; message?: string } | undefined;
  const parts = Object.entries(d)
    .filter(([key, value]) => key !== 'at' && key !== 'error' && value !== null && typeof value !== 'object')
    .map(([key, value]) => `${key}=${String(value)}`);
  if (error?.message) parts.push(`${error.code ?? 'error'}: ${error.message}`);
  return parts.join(' ');
}

export async function jobEvents(ctx: CommandContext, id: string): Promise<void> {
  const client = await ctx.client();
  const palette = paletteFor(ctx.io, 'stdout');
  // NDJSON only under --json; otherwise a line per event with what it says (table, phase, counts, error), in a
  // pipe as on a terminal (it printed NDJSON in a pipe, and only the event's name on a terminal).
  const job = await followJob(client, id, (event) => {
    if (ctx.json) {
      ctx.io.stdout.write(`${JSON.stringify(event)}\n`);
      return;
    }
    const at =
      typeof event.data.at === 'number' ? when(event.data.at).slice(11, 19) : new Date().toISOString().slice(11, 19);
    ctx.io.stdout.write(`${palette.dim(at)} ${palette.bold(event.event)}  ${eventDetails(event)}\n`);
  });
  ctx.io.stderr.write(`lake: job ${job.id} ${job.status}${job.error ? `: ${job.error.message}` : ''}\n`);
  ctx.exitCode = exitCodeForJob(job);
}

export async function cancelJob(ctx: CommandContext, id: string): Promise<void> {
  const outcome = await (await ctx.client()).read(JOB_ROUTES.cancelJob, { params: { id } });
  if (ctx.json) return printJson(ctx.io, outcome);
  printFields(ctx.io, [...jobFields(outcome.job), ['execution may continue', outcome.execution_may_continue]]);
}

export async function jobResult(
  ctx: CommandContext,
  id: string,
  output: string | undefined,
  formatName?: string,
): Promise<void> {
  const format = downloadFormat(formatName);
  const client = await ctx.client();
  const fresh = async (): Promise<ResultFile> => {
    const result = await client.read(JOB_ROUTES.getJobResult, {
      params: { id },
      query: format === 'parquet' ? {} : { file_format: format },
    });
    const file = result.files[0];
    if (!file) throw usageError(`Job ${id} has no result file.`);
    return file;
  };
  await downloadResult(ctx, client, id, output ?? `${id}.${extensionOf(format)}`, fresh);
}
