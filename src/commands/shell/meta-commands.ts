import { spawnSync } from 'node:child_process';
import { createWriteStream, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CATALOG_ROUTES, SERVICE_ROUTES } from '../../contract/routes.js';
import type { LakeClient } from '../../client/lake-client.js';
import { isOutputFormat, OUTPUT_FORMATS } from '../../render/rows.js';
import type { CommandContext } from '../context.js';
import { printRows, when } from '../listing.js';
import { useSchema, type ShellState, type TerminalHandover } from './shell-query.js';
import { parseParameterFlags } from '../query/query-params.js';
import { temporaryFolder } from '../../support/temporary-folder.js';
import { readTextFile } from '../text-input.js';
import type { QueryParameterObject } from '../../contract/types.js';
import { isComplete } from './statement.js';

export const HELP = `Statements end with ; and may span lines. ^C cancels the running query (or clears the line); ^C twice on
an empty line, ^D or \\q quits. TAB completes keywords, functions, schemas, tables, columns (also after an alias).

  \\dn               list schemas             \\x              toggle one-record-per-block output
  \\dt [schema]      list tables and views    \\format <name>  table, vertical, csv, tsv, json, ndjson, markdown
  \\d [name]         list, or describe one    \\o [file]       results to a file; \\o alone: back to the screen
  \\i <file>         run the SQL in a file    \\e              edit the last statement in $EDITOR, then run it
  \\timing           toggle timing            \\conninfo       what this shell talks to
  \\c [schema]       resolve unqualified names in schema (USE schema; does the same); \\c alone: where they do now
  \\set [name[:type] value]   a value for $name in later statements (\\set alone lists them); \\unset name
  \\? or help        this help                \\q              quit
`;

/** What a meta-command may use of the shell that runs it. */
export interface ShellSession {
  ctx: CommandContext;
  client: LakeClient;
  state: ShellState;
  /** "the local lake at …" or "lake serve at …". */
  target: string;
  terminal: TerminalHandover;
  /** Runs SQL as if typed: each statement in turn, a failure printed and the next one run. */
  runSql(sql: string): Promise<void>;
  /** Leaves text in the line buffer as the start of a statement still being typed. */
  continueWith(text: string): void;
}

/** A meta-command (`\…`, help, quit); true to quit. */
export async function runMetaCommand(session: ShellSession, command: string): Promise<boolean> {
  const { ctx, client, state } = session;
  const [name, ...args] = command.split(/\s+/);
  const arg = args.join(' ');
  const say = (text: string): void => void ctx.io.stdout.write(`${text}\n`);
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
      say(`Output is ${state.format === 'vertical' ? 'one record per block' : 'a table'}.`);
      return false;
    case '\\timing':
      state.timing = !state.timing;
      say(`Timing is ${state.timing ? 'on' : 'off'}.`);
      return false;
    case '\\format':
      if (!isOutputFormat(arg)) say(`Formats: ${OUTPUT_FORMATS.join(', ')} (now ${state.format}).`);
      else {
        state.format = arg;
        say(`Output is ${arg}.`);
      }
      return false;
    case '\\o':
      // Before \format existed, \o named the format; a bare format word keeps meaning that.
      if (isOutputFormat(arg)) {
        state.format = arg;
        say(`Output is ${arg}. (\\format ${arg} says the same; \\o FILE writes results to a file.)`);
      } else await redirect(session, arg);
      return false;
    case '\\i':
      await include(session, arg);
      return false;
    case '\\e':
      await edit(session);
      return false;
    case '\\conninfo': {
      const who = await client.read(SERVICE_ROUTES.whoAmI, {});
      say(
        `Connected to ${session.target} as ${who.user?.name ?? who.credential.name} (${who.principal_kind}) in ${who.organization.name}.`,
      );
      return false;
    }
    case '\\c':
      if (arg === '')
        say(
          state.schema === undefined
            ? 'No schema: write names as schema.table.'
            : `Unqualified names resolve in ${state.schema}.`,
        );
      else await useSchema(ctx, client, state, arg);
      return false;
    case '\\set':
      setParameter(session, arg);
      return false;
    case '\\unset':
      say(state.parameters.delete(arg.toLowerCase()) ? `$${arg} is unset.` : `$${arg} was not set.`);
      return false;
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
    case '\\d':
      await describe(ctx, client, arg);
      return false;
    default:
      say(`Unknown command ${name}; \\? lists them.`);
      return false;
  }
}

/** `\set name[:type] value`: a value later statements that name `$name` are sent with; `\set` alone lists them. */
function setParameter(session: ShellSession, arg: string): void {
  const { ctx, state } = session;
  const say = (text: string): void => void ctx.io.stdout.write(`${text}\n`);
  const shown = (p: QueryParameterObject): string =>
    `$${p.name ?? ''} = ${p.value ?? 'NULL'}${p.type ? ` (${p.type})` : ''}`;
  if (arg === '') {
    if (state.parameters.size === 0) say('No values are set; \\set name value sets one.');
    for (const p of state.parameters.values()) say(shown(p));
    return;
  }
  const space = arg.search(/\s/);
  const head = space < 0 ? arg : arg.slice(0, space);
  const value = space < 0 ? null : arg.slice(space + 1);
  try {
    const [parameter] = parseParameterFlags([value === null ? head : `${head}=${value}`]) ?? [];
    if (!parameter?.name) throw new Error('\\set takes a name ($name), not a position.');
    state.parameters.set(parameter.name.toLowerCase(), parameter);
    say(shown(parameter));
  } catch (error) {
    say(`${error instanceof Error ? error.message : String(error)} For example: \\set since:date 2024-01-01`);
  }
}

/** `\o FILE`: every result after it goes to the file (created afresh, 0600), until `\o` alone. */
async function redirect(session: ShellSession, path: string): Promise<void> {
  const { state, ctx } = session;
  if (state.output) {
    const previous = state.output;
    state.output = undefined;
    await new Promise((done) => previous.stream.end(done));
    ctx.io.stdout.write(`Results are no longer written to ${previous.path}.\n`);
  }
  if (!path) {
    ctx.io.stdout.write('Results go to the screen.\n');
    return;
  }
  const full = resolve(path);
  const stream = createWriteStream(full, { flags: 'w', mode: 0o600 });
  // An unwritable path fails here, in one line, instead of at the next result.
  const failure = await new Promise<Error | undefined>((settle) => {
    stream.once('open', () => settle(undefined));
    stream.once('error', settle);
  });
  if (failure) {
    ctx.io.stdout.write(`Cannot write to ${full}: ${failure.message}\n`);
    return;
  }
  state.output = { path: full, stream };
  ctx.io.stdout.write(`Results go to ${full} (as ${state.format}); \\o alone sends them to the screen again.\n`);
}

/** `\i FILE`: the file's statements, run as if typed. */
async function include(session: ShellSession, path: string): Promise<void> {
  if (!path) {
    session.ctx.io.stdout.write('Name the file: \\i report.sql\n');
    return;
  }
  let sql: string;
  try {
    sql = readTextFile(resolve(path));
  } catch (error) {
    session.ctx.io.stdout.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return;
  }
  await session.runSql(sql);
}

/**
 * `\e`: the last statement in $VISUAL or $EDITOR (vi when neither is set), in a private temporary file. A complete
 * statement written back runs at once; an unfinished one waits in the buffer for the rest, as psql does.
 */
async function edit(session: ShellSession): Promise<void> {
  const { ctx } = session;
  const editor = ctx.env.VISUAL || ctx.env.EDITOR || 'vi';
  const folder = temporaryFolder('lake-edit-');
  const file = join(folder.dir, 'statement.sql');
  try {
    writeFileSync(file, `${session.state.lastSql ?? ''}\n`, { mode: 0o600 });
    const ran = await session.terminal.whileAway(() =>
      // The editor's command may hold arguments (`code --wait`); the file goes last, as git passes it.
      spawnSync('/bin/sh', ['-c', `${editor} "$1"`, 'lake-edit', file], {
        stdio: 'inherit',
        env: { ...process.env, ...ctx.env },
      }),
    );
    if (ran.error || ran.status !== 0) {
      ctx.io.stdout.write(`The editor (${editor}) did not finish cleanly; nothing was run.\n`);
      return;
    }
    const text = readTextFile(file).trim();
    if (text === '') return;
    ctx.io.stdout.write(`${text}\n`);
    if (isComplete(text)) await session.runSql(text);
    else session.continueWith(text);
  } finally {
    folder.remove();
  }
}

/** `\d name`: one table or view's columns; the name may leave out its schema when only one schema has it. */
async function describe(ctx: CommandContext, client: LakeClient, arg: string): Promise<void> {
  // \d alone lists the relations, as psql's does.
  if (!arg) return listRelations(ctx, client, undefined);
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
      return;
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
