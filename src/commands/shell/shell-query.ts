import { randomUUID } from 'node:crypto';
import type { WriteStream } from 'node:fs';
import { CATALOG_ROUTES, JOB_ROUTES, QUERY_ROUTES } from '../../contract/routes.js';
import type { QueryParameterObject } from '../../contract/types.js';
import type { LakeClient } from '../../client/lake-client.js';
import { IOStreams } from '../../render/iostreams.js';
import type { OutputFormat } from '../../render/rows.js';
import { startSpinner } from '../../render/spinner.js';
import type { CommandContext } from '../context.js';
import { PAGE_SIZE, printQueryRows, resultFileReader } from '../query/print-rows.js';
import { TABLE_DEFAULT_MAX_ROWS } from '../query/run.js';
import { waitForQuery } from '../query/wait.js';
import { groupDigits } from '../../support/group-digits.js';

/** How long a statement runs before the shell shows a spinner with its elapsed time. */
const SPINNER_DELAY_MS = 1000;

export interface ShellState {
  format: OutputFormat;
  timing: boolean;
  /** Where results go after `\o FILE`; the terminal when unset. */
  output?: { path: string; stream: WriteStream };
  /** The last statement run, for `\e`. */
  lastSql?: string;
  /** A query running now: ^C cancels it. */
  running?: { id: string; stop: AbortController };
  /** ^C cancelled a statement: the rest of its line (or file) is not run. */
  interrupted?: boolean;
  /** The schema unqualified names resolve in (`\c`, `USE`, --schema). */
  schema?: string;
  /** Values `\set` gave, by lower-cased name: a statement that names `$name` is sent with its value. */
  parameters: Map<string, QueryParameterObject>;
}

/** `USE schema` (or `USE lake.schema`): the shell's, since every query is a session of its own. */
const USE = /^\s*use\s+(?:lake\s*\.\s*)?("(?:[^"]|"")+"|[^\s;."]+)\s*$/i;

/** The schema a `USE` statement names, unquoted; undefined for any other statement. */
export function usedSchema(sql: string): string | undefined {
  const named = USE.exec(sql)?.[1];
  if (named === undefined) return undefined;
  return named.startsWith('"') ? named.slice(1, -1).replace(/""/g, '"') : named;
}

/** Makes `schema` the shell's default after checking the caller can see it; says what happened. */
export async function useSchema(
  ctx: CommandContext,
  client: LakeClient,
  state: ShellState,
  schema: string,
): Promise<void> {
  const found = await client.read(CATALOG_ROUTES.listSchemas, {});
  const match = found.data.find((s) => s.name.toLowerCase() === schema.toLowerCase());
  if (!match) {
    ctx.io.stdout.write(
      `No schema ${schema} you can read; \\dn lists them. The schema is still ${state.schema ?? 'none'}.\n`,
    );
    return;
  }
  state.schema = match.name;
  ctx.io.stdout.write(`Unqualified names now resolve in ${match.name}.\n`);
}

/** The `\set` values the statement names (`$name`): only those are sent, so others never fail it. */
function parametersFor(state: ShellState, sql: string): QueryParameterObject[] | undefined {
  const named = [...state.parameters.entries()]
    .filter(([name]) => new RegExp(`\\$${name}(?![A-Za-z0-9_])`, 'i').test(sql))
    .map(([, value]) => value);
  return named.length > 0 ? named : undefined;
}

/** The shell's terminal, handed over for a while to a program that needs it (the pager, the editor). */
export interface TerminalHandover {
  whileAway<T>(use: () => T | Promise<T>): Promise<T>;
}

/**
 * Runs one statement: submitted, waited for (^C cancels it on the service; after a second a spinner shows the time
 * it has run), its rows printed: on the terminal through the pager when longer than the screen, at most 1,000 as a
 * table (as `lake query` prints), or all of them into the file `\o` named.
 */
export async function executeStatement(
  ctx: CommandContext,
  client: LakeClient,
  state: ShellState,
  terminal: TerminalHandover,
  sql: string,
): Promise<void> {
  // With its semicolon: written back from \e unchanged, it runs again.
  state.lastSql = `${sql};`;
  const use = usedSchema(sql);
  if (use !== undefined) return useSchema(ctx, client, state, use);
  const parameters = parametersFor(state, sql);
  const submitted = await client.read(QUERY_ROUTES.createQuery, {
    body: {
      sql,
      ...(state.schema !== undefined ? { schema: state.schema } : {}),
      ...(parameters ? { parameters } : {}),
    },
    idempotencyKey: `sql-${randomUUID()}`,
  });
  const stop = new AbortController();
  state.running = { id: submitted.id, stop };
  const spinner = startSpinner(ctx.io, `running ${submitted.id}`, Date.now, { delayMs: SPINNER_DELAY_MS });
  let cancelled = false;
  stop.signal.addEventListener(
    'abort',
    () => {
      cancelled = true;
      spinner.stop();
      ctx.io.stdout.write(`\ncancelling ${submitted.id}…\n`);
      // The outcome is what the shell waits for next (the query ends cancelled, or its own way).
      void client.call(JOB_ROUTES.cancelJob, { params: { id: submitted.id } }).catch(() => undefined);
    },
    { once: true },
  );
  const started = Date.now();
  try {
    // Cancelled: wait a little for the service to say so, then give the prompt back either way.
    const waited = await waitForQuery(client, submitted.id, {
      mode: ctx.mode ?? 'remote',
      query: { format: 'inline', limit: PAGE_SIZE },
      signal: stop.signal,
    });
    spinner.stop();
    const { page: final, requestId } =
      cancelled && (waited.page.status === 'running' || waited.page.status === 'queued')
        ? await waitForQuery(client, submitted.id, { mode: ctx.mode ?? 'remote', timeoutMs: 3000 })
        : waited;
    if (final.status === 'cancelled' || cancelled) {
      ctx.io.stdout.write(
        `query ${submitted.id} ${final.status === 'cancelled' ? 'cancelled' : 'was asked to stop'}\n`,
      );
      return;
    }
    if (final.status !== 'succeeded') {
      ctx.io.stdout.write(
        `error ${final.error?.code ?? final.status}: ${final.error?.message ?? `the query ${final.status}`}${requestId ? ` (query ${final.id}, request ${requestId})` : ''}\n`,
      );
      return;
    }
    const toFile = state.output;
    const table = state.format === 'table' || state.format === 'vertical';
    const io = toFile ? new IOStreams(toFile.stream, ctx.io.stderr, ctx.io.stdin, ctx.env, true) : ctx.io;
    const maxRows = table && !toFile ? TABLE_DEFAULT_MAX_ROWS : Number.POSITIVE_INFINITY;
    // The shell's own words in every footer: \x, not the command line's flag; \o FILE, not --max-rows.
    const printed = await printQueryRows(
      client,
      io,
      final,
      state.format,
      maxRows,
      {
        env: ctx.env,
        enabled: !toFile && ctx.globals.pager !== false,
        verticalHint: '\\x',
        moreHint: `\\o FILE writes all of them to a file, or lake query download ${final.id}`,
        handover: terminal.whileAway.bind(terminal),
      },
      resultFileReader(ctx, client, final.id),
    );
    const count = `${groupDigits(printed.total)} row${printed.total === 1 ? '' : 's'}`;
    if (toFile) ctx.io.stdout.write(`(${count} written to ${toFile.path})\n`);
    else if (table) ctx.io.stdout.write(`(${count})\n`);
    if (state.timing)
      ctx.io.stdout.write(`Time: ${Date.now() - started} ms (execution ${final.duration_ms ?? 0} ms)\n`);
  } finally {
    spinner.stop();
    state.running = undefined;
  }
}
