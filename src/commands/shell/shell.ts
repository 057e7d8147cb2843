import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Interface } from 'node:readline';
import { CATALOG_ROUTES, JOB_ROUTES, QUERY_ROUTES } from '../../contract/routes.js';
import { resolveConfigDir } from '../../config/paths.js';
import { printError } from '../errors.js';
import { isOutputFormat, type OutputFormat } from '../../render/rows.js';
import type { LakeClient } from '../../client/lake-client.js';
import type { CommandContext } from '../context.js';
import { printRows, when } from '../listing.js';
import { PAGE_SIZE, printQueryRows, resultFileReader } from '../query/print-rows.js';
import { rowOutput, runQuery } from '../query/run.js';
import { waitForQuery } from '../query/wait.js';
import { SqlCompleter } from './completion.js';
import { splitScript } from '../query/script.js';
import { isComplete } from './statement.js';

const PROMPT = 'lake> ';
const CONTINUE = '   -> ';
const HISTORY_SIZE = 1000;

const HELP = `Statements end with ; and may span lines. ^C cancels the running query (or clears the line); ^C twice on
an empty line, ^D or \\q quits. TAB completes keywords, functions, schemas, tables and columns.

  \\dn               list schemas             \\x            toggle one-record-per-block output
  \\dt [schema]      list tables and views    \\o <format>   output: table, vertical, csv, tsv, json, ndjson, markdown
  \\d [name]         list, or describe one    \\timing       toggle timing of each query
  \\conninfo         what this shell talks to \\? or help    this help
`;

interface ShellState {
  format: OutputFormat;
  timing: boolean;
  /** A query running now: ^C cancels it. */
  running?: { id: string; stop: AbortController };
  /** ^C cancelled a statement: the rest of its line is not run. */
  interrupted?: boolean;
}

/** Where the shell keeps its history: the local lake's home, or beside the profiles for a remote service. */
function historyFile(ctx: CommandContext, home: string | undefined): string {
  return home ? join(home, 'sql_history') : join(resolveConfigDir(ctx.env), 'sql_history');
}

function loadHistory(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).reverse().slice(0, HISTORY_SIZE);
  } catch {
    // No history yet (the first session) or an unreadable file: the shell starts without one.
    return [];
  }
}

function saveHistory(file: string, history: readonly string[]): void {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, `${[...history].slice(0, HISTORY_SIZE).reverse().join('\n')}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  } catch {
    // A history that cannot be kept does not stop the session.
  }
}

/**
 * `lake sql`: an interactive SQL shell over the same API as every command (local lake or lake serve). Piped input
 * runs as `lake query -` does.
 */
export async function runShell(
  ctx: CommandContext,
  options: { output?: string; continueOnError?: boolean },
): Promise<void> {
  if ((ctx.io.stdin as { isTTY?: boolean }).isTTY !== true)
    return runQuery(ctx, '-', { output: options.output, continueOnError: options.continueOnError });
  // The shell owns the terminal; a pager would fight readline for it.
  ctx.globals = { ...ctx.globals, pager: false };
  const client = await ctx.client();
  const settings = await ctx.settings();
  const state: ShellState = {
    format:
      options.output && isOutputFormat(options.output)
        ? options.output
        : rowOutput(ctx, { output: options.output }).format,
    timing: false,
  };
  const file = historyFile(ctx, settings.homeDir.value);
  const completer = new SqlCompleter(client);
  const readline = await import('node:readline');
  const rl = readline.createInterface({
    input: ctx.io.stdin,
    output: ctx.io.stdout as NodeJS.WritableStream,
    terminal: true,
    history: loadHistory(file),
    historySize: HISTORY_SIZE,
    removeHistoryDuplicates: true,
    completer: (line: string, callback: (error: Error | null, result: [string[], string]) => void) => {
      completer.complete(line).then(
        (result) => callback(null, result),
        () => callback(null, [[], line]),
      );
    },
  });
  const target =
    ctx.mode === 'local' ? `the local lake at ${settings.homeDir.value}` : `lake serve at ${settings.baseUrl.value}`;
  ctx.io.stdout.write(`lake ${target}. Statements end with ;, \\? for help, \\q to quit.\n`);
  let buffer = '';
  let interrupts = 0;
  rl.setPrompt(PROMPT);
  rl.prompt();
  const done = new Promise<void>((resolve) => rl.on('close', resolve));
  rl.on('SIGINT', () => {
    if (state.running) {
      state.interrupted = true;
      state.running.stop.abort();
      return;
    }
    if (buffer !== '' || rl.line !== '') {
      buffer = '';
      interrupts = 0;
      ctx.io.stdout.write('^C\n');
      rl.setPrompt(PROMPT);
      (rl as Interface & { line: string }).line = '';
      rl.prompt();
      return;
    }
    interrupts += 1;
    if (interrupts >= 2) return rl.close();
    ctx.io.stdout.write('\n(^C again, ^D or \\q to quit)\n');
    rl.prompt();
  });
  // Input stays live while a statement runs, so ^C reaches the SIGINT handler; lines typed meanwhile are dropped.
  let busy = false;
  rl.on('line', (line) => {
    interrupts = 0;
    if (busy) return;
    void (async () => {
      const trimmed = line.trim();
      if (
        buffer === '' &&
        (trimmed.startsWith('\\') || trimmed === 'help' || trimmed === 'exit' || trimmed === 'quit')
      ) {
        busy = true;
        const quit = await meta(ctx, client, state, trimmed, target).catch(
          (error: unknown) => (printError(ctx.io, error, false), false),
        );
        busy = false;
        if (quit) return rl.close();
        rl.setPrompt(PROMPT);
        rl.prompt();
        return;
      }
      buffer = buffer === '' ? line : `${buffer}\n${line}`;
      if (buffer.trim() === '' || !isComplete(buffer)) {
        if (buffer.trim() === '') buffer = '';
        rl.setPrompt(buffer === '' ? PROMPT : CONTINUE);
        rl.prompt();
        return;
      }
      const sql = buffer;
      buffer = '';
      busy = true;
      keepAsOneEntry(rl, sql);
      // Several statements on a line run one after another, as psql runs them; a failure does not stop the rest.
      for (const statement of splitScript(sql)) {
        await execute(ctx, client, state, statement.sql).catch((error: unknown) => printError(ctx.io, error, false));
        if (state.interrupted) break;
      }
      state.interrupted = false;
      busy = false;
      rl.setPrompt(PROMPT);
      rl.prompt();
    })();
  });
  await done;
  ctx.io.stdout.write('\n');
  saveHistory(file, (rl as Interface & { history: string[] }).history ?? []);
}

/**
 * A statement typed over several lines is one history entry (as psql keeps it), not one per line: readline has
 * added each line; they are replaced by the whole statement on one line.
 */
function keepAsOneEntry(rl: Interface, sql: string): void {
  // Readline keeps no blank line, so only the lines with text were added.
  const lines = sql.split('\n').filter((line) => line.trim() !== '').length;
  if (lines < 2) return;
  const history = (rl as Interface & { history: string[] }).history;
  history.splice(0, lines, sql.replace(/\s*\n\s*/g, ' '));
}

/** Runs one statement: submitted, waited for (^C cancels it on the service), its rows printed. */
async function execute(ctx: CommandContext, client: LakeClient, state: ShellState, sql: string): Promise<void> {
  const submitted = await client.read(QUERY_ROUTES.createQuery, {
    body: { sql },
    idempotencyKey: `sql-${randomUUID()}`,
  });
  const stop = new AbortController();
  state.running = { id: submitted.id, stop };
  let cancelled = false;
  stop.signal.addEventListener(
    'abort',
    () => {
      cancelled = true;
      ctx.io.stdout.write(`\ncancelling ${submitted.id}…\n`);
      // The outcome is what the shell waits for next (the query ends cancelled, or its own way).
      void client.call(JOB_ROUTES.cancelJob, { params: { id: submitted.id } }).catch(() => undefined);
    },
    { once: true },
  );
  const started = Date.now();
  try {
    // Cancelled: wait a little for the service to say so, then give the prompt back either way.
    const page = await waitForQuery(client, submitted.id, {
      mode: ctx.mode ?? 'remote',
      query: { format: 'inline', limit: PAGE_SIZE },
      signal: stop.signal,
    });
    const final =
      cancelled && (page.status === 'running' || page.status === 'queued')
        ? await waitForQuery(client, submitted.id, { mode: ctx.mode ?? 'remote', timeoutMs: 3000 })
        : page;
    if (final.status === 'cancelled' || cancelled) {
      ctx.io.stdout.write(
        `query ${submitted.id} ${final.status === 'cancelled' ? 'cancelled' : 'was asked to stop'}\n`,
      );
      return;
    }
    if (final.status !== 'succeeded') {
      ctx.io.stdout.write(
        `error ${final.error?.code ?? final.status}: ${final.error?.message ?? `the query ${final.status}`}\n`,
      );
      return;
    }
    // The shell's own word for every column is \x, not the command line's flag.
    const printed = await printQueryRows(
      client,
      ctx.io,
      final,
      state.format,
      Number.POSITIVE_INFINITY,
      { env: {}, enabled: false, verticalHint: '\\x' },
      resultFileReader(ctx, client, final.id),
    );
    if (state.format === 'table' || state.format === 'vertical')
      ctx.io.stdout.write(`(${printed.total.toLocaleString('en-US')} row${printed.total === 1 ? '' : 's'})\n`);
    if (state.timing)
      ctx.io.stdout.write(`Time: ${Date.now() - started} ms (execution ${final.duration_ms ?? 0} ms)\n`);
  } finally {
    state.running = undefined;
  }
}

/** A meta-command; true to quit. */
async function meta(
  ctx: CommandContext,
  client: LakeClient,
  state: ShellState,
  command: string,
  target: string,
): Promise<boolean> {
  const [name, ...args] = command.split(/\s+/);
  const arg = args.join(' ');
  switch (name) {
    case '\\q':
    case 'exit':
    case 'quit':
      return true;
    case '\\?':
    case 'help':
      ctx.io.stdout.write(HELP);
      return false;
    case '\\x':
      state.format = state.format === 'vertical' ? 'table' : 'vertical';
      ctx.io.stdout.write(`Output is ${state.format === 'vertical' ? 'one record per block' : 'a table'}.\n`);
      return false;
    case '\\timing':
      state.timing = !state.timing;
      ctx.io.stdout.write(`Timing is ${state.timing ? 'on' : 'off'}.\n`);
      return false;
    case '\\o':
      if (!isOutputFormat(arg))
        ctx.io.stdout.write(`Formats: table, vertical, csv, tsv, json, ndjson, markdown (now ${state.format}).\n`);
      else {
        state.format = arg;
        ctx.io.stdout.write(`Output is ${arg}.\n`);
      }
      return false;
    case '\\conninfo': {
      const who = await client.read((await import('../../contract/routes.js')).SERVICE_ROUTES.whoAmI, {});
      ctx.io.stdout.write(
        `Connected to ${target} as ${who.user?.name ?? who.credential.name} (${who.principal_kind}) in ${who.organization.name}.\n`,
      );
      return false;
    }
    case '\\dn': {
      const schemas = await client.read(CATALOG_ROUTES.listSchemas, {});
      await printRows(
        ctx,
        'table',
        ['schema', 'tables', 'views'],
        schemas.data.map((s) => ({ schema: s.name, tables: s.table_count, views: s.view_count })),
      );
      return false;
    }
    case '\\dt':
      await listRelations(ctx, client, arg ? [arg] : undefined);
      return false;
    case '\\d': {
      // \d alone lists the relations, as psql's does; \d name finds the one table of that name in any schema.
      if (!arg) {
        await listRelations(ctx, client, undefined);
        return false;
      }
      const named = arg.replace(/^lake\./, '');
      let [schema, ...rest] = named.split('.');
      if (rest.length === 0) {
        const matches = await tablesNamed(client, named);
        if (matches.length !== 1) {
          ctx.io.stdout.write(
            matches.length === 0
              ? `No table or view named ${named}; \\dt lists them.\n`
              : `${named} is in several schemas: ${matches.join(', ')}. Name one: \\d schema.${named}\n`,
          );
          return false;
        }
        [schema, ...rest] = (matches[0] as string).split('.');
      }
      const table = await client.read(CATALOG_ROUTES.getTable, {
        params: { schema: schema as string, table: rest.join('.') },
      });
      ctx.io.stdout.write(`${table.qualified_name} (${table.kind})\n`);
      await printRows(
        ctx,
        'table',
        ['column', 'type', 'nullable'],
        table.columns.map((c) => ({ column: c.name, type: c.type, nullable: c.nullable })),
      );
      return false;
    }
    default:
      ctx.io.stdout.write(`Unknown command ${name}; \\? lists them.\n`);
      return false;
  }
}

/** The tables and views of some schemas (all of them when none is named), as \dt and \d print them. */
async function listRelations(ctx: CommandContext, client: LakeClient, only: string[] | undefined): Promise<void> {
  const schemas = only ?? (await client.read(CATALOG_ROUTES.listSchemas, {})).data.map((s) => s.name);
  const rows = [];
  for (const schema of schemas) {
    for (const t of (await client.read(CATALOG_ROUTES.listTables, { params: { schema } })).data)
      rows.push({
        name: `${t.schema}.${t.name}`,
        kind: t.kind,
        rows: t.row_count,
        updated: t.updated === null ? '' : when(t.updated),
      });
  }
  await printRows(ctx, 'table', ['name', 'kind', 'rows', 'updated'], rows);
}

/** Every schema.table the credential may see whose table is called `name` (case-insensitively). */
async function tablesNamed(client: LakeClient, name: string): Promise<string[]> {
  const found: string[] = [];
  for (const schema of (await client.read(CATALOG_ROUTES.listSchemas, {})).data.map((s) => s.name))
    for (const t of (await client.read(CATALOG_ROUTES.listTables, { params: { schema } })).data)
      if (t.name.toLowerCase() === name.toLowerCase()) found.push(`${t.schema}.${t.name}`);
  return found;
}
