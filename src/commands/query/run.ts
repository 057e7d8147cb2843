import { randomUUID } from 'node:crypto';
import { mark } from '../../support/debug-timing.js';
import { resolveOutputFormat, UnknownFormatError } from '../../render/output-format.js';
import { startSpinner } from '../../render/spinner.js';
import type { OutputFormat } from '../../render/rows.js';
import { JOB_ROUTES, QUERY_ROUTES } from '../../contract/routes.js';
import type { CommandContext } from '../context.js';
import { asCliError, CliError, EXIT, exitCodeFor, usageError } from '../exit-codes.js';
import { onInterrupt } from '../interrupt.js';
import { PAGE_SIZE, printQueryRows, resultFileReader } from './print-rows.js';
import { readSql } from './sql-input.js';
import { parseParameterFlags } from './query-params.js';
import type { QueryParameterObject } from '../../contract/types.js';
import { inScriptLines, splitScript, type ScriptStatement } from './script.js';
import type { LakeClient } from '../../client/lake-client.js';
import { printError } from '../errors.js';
import { printRows } from '../listing.js';
import { waitForQuery, type QueryPage } from './wait.js';
import { queryEndedError } from './ended.js';
import { groupDigits } from '../../support/group-digits.js';

export interface RunOptions {
  file?: string;
  output?: string;
  maxRows?: string;
  wait?: string;
  /** In a script, run the statements after a failed one too (the exit code is still the first failure's). */
  continueOnError?: boolean;
  /** Print each query's id on stderr, alone on its line, as soon as it is submitted. */
  printId?: boolean;
  /** The schema unqualified names resolve in (else LAKE_SCHEMA, else the profile's). */
  schema?: string;
  /** `-p NAME[:TYPE]=VALUE` flags. */
  param?: string[];
  timeout?: string;
  rowLimit?: string;
  byteLimit?: string;
  dryRun?: boolean;
  tag?: string[];
}

/** How each statement's rows are printed, and how long to wait for it. */
interface StatementRun {
  format: OutputFormat;
  maxRows: number;
  waitSeconds: number | undefined;
  printId: boolean;
  /** What each statement is asked with besides its SQL. */
  asked: {
    schema?: string;
    parameters?: QueryParameterObject[];
    timeout_seconds?: number;
    row_limit?: number;
    byte_limit?: number;
    dry_run?: boolean;
    tags?: string[];
  };
}

/** After ^C, how long to wait for the server to report the query cancelled. */
const CANCEL_WAIT_MS = 5000;

/** The table format holds its rows to size the columns, so it shows at most this many unless told otherwise. */
export const TABLE_DEFAULT_MAX_ROWS = 1000;

function positive(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || (flag === '--max-rows' && !Number.isInteger(n)))
    throw usageError(`${flag} must be a ${flag === '--max-rows' ? 'whole ' : ''}number of at least 0.`);
  return n;
}

/** The rows' format (flag, LAKE_OUTPUT, the profile, then table on a terminal and csv in a pipe) and how many to print. */
export function rowOutput(
  ctx: CommandContext,
  options: { output?: string; maxRows?: string },
): { format: OutputFormat; maxRows: number } {
  let format: OutputFormat;
  try {
    const profiles = ctx.profiles();
    const profile = profiles.profile(ctx.profileName(profiles)).output;
    format = resolveOutputFormat(ctx.io, { json: ctx.json, flag: options.output, env: ctx.env.LAKE_OUTPUT, profile });
  } catch (error) {
    if (error instanceof UnknownFormatError) throw usageError(error.message);
    throw error;
  }
  return {
    format,
    maxRows:
      positive(options.maxRows, '--max-rows') ??
      (format === 'table' ? TABLE_DEFAULT_MAX_ROWS : Number.POSITIVE_INFINITY),
  };
}

/** The limits the server applies to each statement (--timeout, --row-limit, --byte-limit) and --dry-run. */
function serverLimits(options: RunOptions): Omit<StatementRun['asked'], 'schema' | 'parameters'> {
  const whole = (value: string | undefined, flag: string, least: number): number | undefined => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isInteger(n) || n < least) throw usageError(`${flag} must be a whole number of at least ${least}.`);
    return n;
  };
  const timeout = whole(options.timeout, '--timeout', 1);
  const rows = whole(options.rowLimit, '--row-limit', 0);
  const bytes = whole(options.byteLimit, '--byte-limit', 1);
  return {
    ...(timeout !== undefined ? { timeout_seconds: timeout } : {}),
    ...(rows !== undefined ? { row_limit: rows } : {}),
    ...(bytes !== undefined ? { byte_limit: bytes } : {}),
    ...(options.dryRun === true ? { dry_run: true } : {}),
    ...(options.tag && options.tag.length > 0 ? { tags: options.tag } : {}),
  };
}

/** The schema unqualified names resolve in: --schema, else LAKE_SCHEMA, else the profile's `schema`; none if empty. */
export function querySchema(ctx: CommandContext, flag: string | undefined): string | undefined {
  const profiles = ctx.profiles();
  const value = flag ?? ctx.env.LAKE_SCHEMA ?? profiles.profile(ctx.profileName(profiles)).schema;
  return value === undefined || value === '' ? undefined : value;
}

export async function runQuery(
  ctx: CommandContext,
  sqlArgument: string | undefined,
  options: RunOptions,
): Promise<void> {
  const sql = await readSql(ctx, sqlArgument, options.file);
  const { format, maxRows } = rowOutput(ctx, options);
  const parameters = parseParameterFlags(options.param);
  const schema = querySchema(ctx, options.schema);
  const run: StatementRun = {
    format,
    maxRows,
    waitSeconds: positive(options.wait, '--wait'),
    printId: options.printId === true,
    asked: {
      ...(schema !== undefined ? { schema } : {}),
      ...(parameters ? { parameters } : {}),
      ...serverLimits(options),
    },
  };
  const statements = splitScript(sql);
  if (statements.length === 0)
    throw usageError('There is no SQL to run: it is empty, or only comments.', 'For example: lake query "select 42"');
  if (parameters && statements.length > 1)
    throw usageError('-p gives values to one statement; this SQL holds several. Run them one at a time.');

  if (!(await ctx.settings()).baseUrl.value) await warmLocalEngine(ctx);
  mark('engine module loaded, instance on its way');
  const client = await ctx.client();
  mark('client ready (local: lake opened)');
  // One statement goes as it was written; a script runs statement by statement, as psql and duckdb run one.
  if (statements.length === 1) return runStatement(ctx, client, sql, run);
  await runScript(ctx, client, statements, run, options.continueOnError === true);
}

/**
 * Runs a script's statements in order, each a query of its own with its own result: in a terminal a blank line
 * between tables, in a pipe one result after another (with --json, one JSON document each). The first failure
 * stops the script, named by its statement and line, unless --continue-on-error; the exit code is the first
 * failure's either way. A ^C, or a statement still running past --wait, ends the script there.
 */
async function runScript(
  ctx: CommandContext,
  client: LakeClient,
  statements: readonly ScriptStatement[],
  run: StatementRun,
  continueOnError: boolean,
): Promise<void> {
  let firstFailure: number | undefined;
  for (const [index, statement] of statements.entries()) {
    if (index > 0 && run.format !== 'json' && run.format !== 'ndjson' && ctx.io.isStdoutTTY) ctx.io.stdout.write('\n');
    try {
      await runStatement(ctx, client, statement.sql, run);
    } catch (error) {
      const where = `statement ${index + 1} of ${statements.length} (line ${statement.line})`;
      const known = withPlace(asCliError(error), index + 1, statement.line);
      // With --json, stderr carries JSON only: the place is in the error object (statement, line).
      if (!ctx.json)
        ctx.io.stderr.write(
          `lake: ${where} failed${continueOnError ? '' : '; the statements after it were not run'}\n`,
        );
      if (!continueOnError) throw known;
      printError(ctx.io, known, ctx.json, exitCodeFor(known));
      firstFailure ??= exitCodeFor(known);
      continue;
    }
    if (ctx.exitCode !== EXIT.ok) return;
  }
  if (firstFailure !== undefined) ctx.exitCode = firstFailure;
}

/** A CLI error that also names the script's statement and line it came from. */
function withPlace(error: unknown, statement: number, line: number): unknown {
  if (!(error instanceof CliError)) return error;
  return new CliError(
    error.code,
    inScriptLines(error.message, line),
    error.exitCode,
    error.hint,
    { ...error.about, statement: String(statement), line: String(line) },
    error.requestId,
  );
}

/** Submits one statement, waits for it (^C cancels it on the service) and prints its rows. */
async function runStatement(ctx: CommandContext, client: LakeClient, sql: string, run: StatementRun): Promise<void> {
  const { format, maxRows, waitSeconds } = run;
  // Shown from the moment of submitting, so a busy service never leaves a silent terminal.
  const spinner = startSpinner(ctx.io, 'submitting');
  let submitted;
  try {
    // A key per invocation makes the client's retries of this POST safe: a retried submit cannot run the SQL twice.
    submitted = await client.call(QUERY_ROUTES.createQuery, {
      body: { sql, ...run.asked },
      idempotencyKey: `cli-${randomUUID()}`,
    });
  } catch (error) {
    spinner.stop();
    throw error;
  }
  const id = submitted.body.id;
  mark('submitted');
  // Before any row, and never mixed into them: a script reads it from stderr (2>id.txt, or 2>&1 >/dev/null).
  if (run.printId) ctx.io.stderr.write(`${id}\n`);
  const showStatus = (status: QueryPage['status']): void =>
    spinner.update(status === 'queued' ? `queued ${id} (waiting for a free worker)` : `running ${id}`);
  showStatus(submitted.body.status);
  // ^C cancels the query on the server (it would otherwise run on), then waits a little for the outcome.
  const giveUp = new AbortController();
  let cancelling = false;
  const stopListening = onInterrupt(() => {
    cancelling = true;
    spinner.stop();
    ctx.io.stderr.write(`\nlake: cancelling ${id} (^C again to quit at once)\n`);
    client.call(JOB_ROUTES.cancelJob, { params: { id } }).catch((error: unknown) => {
      ctx.io.stderr.write(`lake: could not cancel ${id}: ${error instanceof Error ? error.message : String(error)}\n`);
    });
    setTimeout(() => giveUp.abort(), CANCEL_WAIT_MS).unref();
  });
  let page: QueryPage;
  let requestId: string | undefined;
  try {
    ({ page, requestId } = await waitForQuery(client, id, {
      mode: ctx.mode ?? 'remote',
      timeoutMs: waitSeconds === undefined ? undefined : waitSeconds * 1000,
      query: { format: 'inline', limit: Math.min(PAGE_SIZE, Math.max(1, maxRows)) },
      signal: giveUp.signal,
      onStatus: showStatus,
    }));
  } finally {
    spinner.stop();
    stopListening();
  }
  if (cancelling) {
    ctx.io.stderr.write(
      page.status === 'running' || page.status === 'queued'
        ? `lake: ${id} is still running; cancellation was requested\n`
        : `lake: ${id} ${page.status}\n`,
    );
    ctx.exitCode = EXIT.interrupted;
    return;
  }
  if (page.status === 'queued' || page.status === 'running') {
    if (ctx.mode === 'local') {
      // Local mode runs the query in this process, which is about to end: it is stopped, not left running.
      await client.call(JOB_ROUTES.cancelJob, { params: { id } }).catch(() => undefined);
      throw new CliError(
        'wait_expired',
        `${id} did not finish within --wait ${waitSeconds} s and was stopped: in local mode a query runs in the lake process itself, and ends with it.`,
        EXIT.failed,
        'Run it without --wait, or against lake serve (--base-url), where it goes on running and lake query poll finds it.',
      );
    }
    ctx.io.stdout.write(`${id}\n`);
    ctx.io.stderr.write(`lake: ${id} is still running; check it with: lake query poll ${id}\n`);
    ctx.exitCode = EXIT.stillRunning;
    return;
  }
  // A failed query says which limit or error ended it (query_timeout, query_memory_limit, …) and what to do.
  if (page.status !== 'succeeded') throw queryEndedError(page, requestId);
  mark('first page received');
  if (page.dry_run) {
    // Nothing ran: what it would return is its columns and their types.
    const columns = (page.result_columns ?? []).map((c) => ({ column: c.name, type: c.type }));
    return printRows(ctx, run.format, ['column', 'type'], columns);
  }
  const printed = await printQueryRows(
    client,
    ctx.io,
    page,
    format,
    maxRows,
    { env: ctx.env, enabled: ctx.globals.pager !== false },
    resultFileReader(ctx, client, page.id),
  );
  mark('rows printed');
  if (ctx.io.isStderrTTY && format === 'table') {
    ctx.io.stderr.write(
      `(${groupDigits(printed.total)} row${printed.total === 1 ? '' : 's'}, ${page.duration_ms ?? 0} ms)\n`,
    );
  }
  // Said on stderr, where it never mixes with the rows (with --json, stderr carries only errors).
  if (page.truncated === true && !ctx.json)
    ctx.io.stderr.write(
      `lake: the result was cut to ${groupDigits(page.row_count ?? 0)} rows by ${page.row_limit !== undefined && page.row_count === page.row_limit ? '--row-limit' : '--byte-limit'}\n`,
    );
}

/**
 * In local mode the query runs in this process: the engine instance it will use is started now, on DuckDB's own
 * threads, while the rest of the local lake loads (about 25 ms less for every `lake query`).
 */
async function warmLocalEngine(ctx: CommandContext): Promise<void> {
  const [{ sharedInstancePool }, { querySettingsFromEnv }] = await Promise.all([
    import('../../service/engine/instance-pool.js'),
    import('../../service/queries/settings.js'),
  ]);
  let settings: ReturnType<typeof querySettingsFromEnv>;
  try {
    settings = querySettingsFromEnv(ctx.env);
  } catch {
    // A malformed setting is reported, as invalid_setting, when the local lake opens; nothing is warmed for it.
    return;
  }
  sharedInstancePool(settings).warm({ parser: true });
}
