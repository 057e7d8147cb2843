import { randomUUID } from 'node:crypto';
import type { WriteStream } from 'node:fs';
import { JOB_ROUTES, QUERY_ROUTES } from '../../contract/routes.js';
import type { LakeClient } from '../../client/lake-client.js';
import { IOStreams } from '../../render/iostreams.js';
import type { OutputFormat } from '../../render/rows.js';
import { startSpinner } from '../../render/spinner.js';
import type { CommandContext } from '../context.js';
import { PAGE_SIZE, printQueryRows, resultFileReader } from '../query/print-rows.js';
import { TABLE_DEFAULT_MAX_ROWS } from '../query/run.js';
import { waitForQuery } from '../query/wait.js';

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
  const submitted = await client.read(QUERY_ROUTES.createQuery, {
    body: { sql },
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
    const count = `${printed.total.toLocaleString('en-US')} row${printed.total === 1 ? '' : 's'}`;
    if (toFile) ctx.io.stdout.write(`(${count} written to ${toFile.path})\n`);
    else if (table) ctx.io.stdout.write(`(${count})\n`);
    if (state.timing)
      ctx.io.stdout.write(`Time: ${Date.now() - started} ms (execution ${final.duration_ms ?? 0} ms)\n`);
  } finally {
    spinner.stop();
    state.running = undefined;
  }
}
