import { paletteFor } from '../render/colors.js';
import { assertFormatsAgree, resolveOutputFormat, UnknownFormatError } from '../render/output-format.js';
import { createRowWriter } from '../render/rows.js';
import type { Row } from '../render/table.js';
import type { RouteContract } from '../contract/route.js';
import type { CallInput, ItemOf, LakeClient } from '../client/lake-client.js';
import { pagedOutput } from '../render/pager.js';
import { printJson } from '../render/record.js';
import type { CommandContext } from './context.js';
import { CliError, EXIT, usageError } from './exit-codes.js';
import { checkedLimit, checkedQuery } from './flag-values.js';
import { readTextFile } from './text-input.js';

/** Epoch seconds as a UTC timestamp for tables and fields. */
export const when = (seconds: number): string => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/**
 * Rows of a listing in the chosen format: a table on a terminal, CSV with a header in a pipe (every listing alike),
 * or --output / LAKE_OUTPUT. `--json` with another --output contradicts itself: a usage error.
 */
/** `--json` with another `--output` is a usage error; checked before anything is fetched or printed. */
export function assertOutputFlags(ctx: CommandContext, output: string | undefined): void {
  try {
    assertFormatsAgree(ctx.json, output);
  } catch (error) {
    throw usageError((error as Error).message);
  }
}

export async function printRows(
  ctx: CommandContext,
  output: string | undefined,
  columns: string[],
  rows: Row[],
): Promise<void> {
  let format;
  try {
    assertFormatsAgree(ctx.json, output);
    format = resolveOutputFormat(ctx.io, { flag: output, env: ctx.env.LAKE_OUTPUT });
  } catch (error) {
    if (error instanceof UnknownFormatError) throw usageError(error.message);
    throw error;
  }
  // Long output on a terminal goes through the pager (not in a pipe, not with --no-pager).
  const paged = pagedOutput(ctx.io, ctx.env, ctx.globals.pager !== false);
  const writer = createRowWriter(format, paged.stream, paletteFor(ctx.io, 'stdout'));
  writer.begin(columns);
  writer.write(rows);
  writer.end();
  await paged.finish();
}

/** A request body from `--from-file`: a JSON object, or a usage error that says what is wrong with the file. */
export function readBodyFile(file: string): Record<string, unknown> {
  const text = readTextFile(file);
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as Record<string, unknown>;
  } catch (error) {
    throw new CliError(
      'file_unreadable',
      `Cannot read a JSON object from ${file}: ${error instanceof Error ? error.message : String(error)}.`,
      EXIT.usage,
    );
  }
}

export interface ApiList<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** One page of a list route (a generic caller cannot see the route's own input type, hence the one cast). */
async function listPage<R extends RouteContract>(
  client: LakeClient,
  route: R,
  params: Record<string, string> | undefined,
  query: Record<string, unknown>,
): Promise<ApiList<ItemOf<R>>> {
  return (await client.call(route, { params, query } as unknown as CallInput<R>)).body as unknown as ApiList<ItemOf<R>>;
}

/** Every item of a paginated list, following next_cursor in pages of 100. */
export async function fetchAll<R extends RouteContract>(
  client: LakeClient,
  route: R,
  params?: Record<string, string>,
): Promise<ItemOf<R>[]> {
  const all: ItemOf<R>[] = [];
  let cursor: string | undefined;
  do {
    const page = await listPage(client, route, params, { limit: 100, starting_after: cursor });
    all.push(...page.data);
    cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined;
  } while (cursor);
  return all;
}

export interface PageOptions {
  limit?: string;
  startingAfter?: string;
  all?: boolean;
  output?: string;
}

/** The paging options every list command takes, as the API pages its lists. */
export function pageOptions<C extends { option(flags: string, description: string, value?: string): C }>(
  command: C,
  defaultLimit = 20,
  max = 100,
): C {
  return command
    .option('--limit <n>', `how many (1-${max})`, String(defaultLimit))
    .option('--starting-after <id>', 'the page after this id (the next_cursor of the page before)')
    .option('--all', 'every page, as one list')
    .option('--output <format>', 'table, vertical, csv, tsv, json, ndjson or markdown');
}

/**
 * A list command: one page (`--limit`, `--starting-after`) or every page (`--all`). `--json` prints the API's list
 * object, `has_more` and `next_cursor` included; otherwise rows (see printRows), and when there is more, a note
 * on stderr saying how to get it (never in the rows a script reads).
 */
export async function printList<R extends RouteContract>(
  ctx: CommandContext,
  options: PageOptions,
  spec: {
    route: R;
    params?: Record<string, string>;
    query?: Record<string, string | number | undefined>;
    columns: string[];
    row: (item: ItemOf<R>) => Row;
    max?: number;
  },
): Promise<void> {
  const max = spec.max ?? 100;
  const limit = checkedPageOptions(ctx, options, max);
  if (spec.route.query) checkedQuery({ ...spec.route, query: spec.route.query }, spec.query ?? {});
  const client = await ctx.client();
  let page = await listPage(client, spec.route, spec.params, {
    ...spec.query,
    limit,
    starting_after: options.startingAfter,
  });
  if (options.all) {
    const data = [...page.data];
    while (page.has_more && page.next_cursor) {
      page = await listPage(client, spec.route, spec.params, {
        ...spec.query,
        limit: max,
        starting_after: page.next_cursor,
      });
      data.push(...page.data);
    }
    page = { object: 'list', data, has_more: false, next_cursor: null };
  }
  await printPage(ctx, options.output, page, spec.columns, spec.row);
}

/** The page size the paging options ask for, or a usage error for options that cannot go together. */
export function checkedPageOptions(ctx: CommandContext, options: PageOptions, max = 100): number {
  const limit = checkedLimit(options.limit, 20, max);
  if (options.all && options.startingAfter)
    throw usageError('--all and --starting-after contradict each other; give one.');
  assertOutputFlags(ctx, options.output);
  return limit;
}

/** A page as list commands print it: the API's list object with --json, else rows and a note when there is more. */
export async function printPage<T>(
  ctx: CommandContext,
  output: string | undefined,
  page: ApiList<T>,
  columns: string[],
  row: (item: T) => Row,
): Promise<void> {
  if (ctx.json) return printJson(ctx.io, page);
  await printRows(ctx, output, columns, page.data.map(row));
  if (page.has_more && page.next_cursor)
    ctx.io.stderr.write(`lake: more after these; next page: --starting-after ${page.next_cursor} (or --all)\n`);
}

/** SQL on one line, cut to `width` characters. */
export function oneLine(sql: string, width: number): string {
  const flat = sql.replace(/\s+/g, ' ').trim();
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
}
