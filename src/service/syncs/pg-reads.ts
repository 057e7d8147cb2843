import type pg from 'pg';
import type { ConnectorSettings } from '../connectors/types.js';
import { boundedReason } from '../core/bounded-text.js';
import { rangeConditions } from './table-ranges.js';
import type { TableResult, TableTask } from './types.js';

interface RelationSize {
  kind: string | null;
  bytes: string | null;
  block_size: number;
}

const sizeOf = (row: RelationSize | undefined, connections: number): string[] =>
  row && (row.kind === 'r' || row.kind === 'm')
    ? rangeConditions(Number(row.bytes), row.block_size, connections)
    : [''];

/** How many reads (a table, or each range of a large one) a sync has before it, as its tables stand at the start. */
export async function readsExpected(
  client: pg.Client,
  tasks: readonly TableTask[],
  rangesPerTable: number,
): Promise<number> {
  if (rangesPerTable === 1) return tasks.length;
  const sizes = await client.query<RelationSize>(
    `SELECT c.relkind AS kind, pg_relation_size(c.oid) AS bytes, current_setting('block_size')::int AS block_size
     FROM unnest($1::text[], $2::text[]) AS t(schema_name, table_name)
     LEFT JOIN pg_namespace n ON n.nspname = t.schema_name LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.table_name`,
    [tasks.map((t) => t.table.schema), tasks.map((t) => t.table.name)],
  );
  return sizes.rows.reduce((sum, row, i) => sum + (tasks[i]?.incremental ? 1 : sizeOf(row, rangesPerTable).length), 0);
}

/** DuckDB's CSV reader refuses a record longer than its max_line_size, 2 MB unless told. */
const DEFAULT_MAX_LINE_BYTES = 2 << 20;

/**
 * The reader's line and buffer sizes for a staged file whose longest record is known (a text or JSON value of
 * several MB is a valid row). The buffer is 4 MB, not DuckDB's 32 MB per thread, unless a record needs more.
 */
export function csvLineOptions(longestRecord: number): string {
  const maxLine = Math.max(DEFAULT_MAX_LINE_BYTES, longestRecord + 1024);
  return `max_line_size = ${maxLine}, buffer_size = ${Math.max(4 << 20, 2 * maxLine)}`;
}

/** Block ranges of a table to read side by side (see rangeConditions); none for what is not a plain table. */
export async function tableRanges(
  client: pg.Client,
  schema: string,
  table: string,
  connections: number,
): Promise<string[]> {
  const row = (
    await client.query<RelationSize>(
      `SELECT c.relkind AS kind, pg_relation_size(c.oid) AS bytes, current_setting('block_size')::int AS block_size
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
      [schema, table],
    )
  ).rows[0];
  const conditions = sizeOf(row, connections);
  return conditions.length > 1 ? conditions : [];
}

/**
 * PostgreSQL's message for a table that failed, without the source's host, port, user or database: those are
 * secrets of the source, and the message reaches the sync object, its stream and the CLI.
 */
export function withoutConnectionDetails(message: string, settings: ConnectorSettings): string {
  const named: [unknown, string][] = [
    [settings.secrets.password, '<password>'],
    [settings.secrets.host ?? settings.config.host, '<host>'],
    [settings.secrets.user ?? settings.config.user, '<user>'],
    [settings.config.database, '<database>'],
  ];
  let clean = message;
  for (const [value, placeholder] of named) {
    if (typeof value === 'string' && value.length >= 2) clean = clean.split(value).join(placeholder);
  }
  return concise(clean);
}

/**
 * A DuckDB reader error quotes the whole offending row (megabytes, and the source's data in the sync object) and
 * lists its options with the staging file's path on this server: the reason keeps the rest.
 */
function concise(message: string): string {
  const kept = message
    .split('\n')
    .filter((line) => !line.startsWith('Original Line:') && !/^\s+[\w ]+ = /.test(line))
    .join('\n')
    .trim();
  return boundedReason(kept);
}

/** Why a table failed, as its result says: no secret of the source, nor a path of this server (a staging or lake file). */
export function tableFailureReason(error: unknown, settings: ConnectorSettings, homeRoot: string): string {
  return withoutConnectionDetails(error instanceof Error ? error.message : String(error), settings)
    .split(homeRoot)
    .join('<lake>');
}

/** The most failed tables a sync's own message names; the sync's tables say why each failed. */
const TABLES_NAMED = 10;

/** Failed tables with their reasons, the first TABLES_NAMED of them: `a (why); b (why); and 3 more tables`. */
export function failedTablesText(failed: readonly { key: string; reason: string }[]): string {
  const named = failed.slice(0, TABLES_NAMED).map((f) => `${f.key} (${boundedReason(f.reason)})`);
  const more = failed.length - named.length;
  return more > 0 ? `${named.join('; ')}; and ${more} more table${more === 1 ? '' : 's'}` : named.join('; ');
}

/** A sync stopped by its connections (idle source, time bound), with the reasons of tables that had failed before. */
export function syncFailure(stopped: unknown, results: readonly (TableResult | undefined)[]): Error {
  const failedTables = results.flatMap((r) => (r?.error ? [{ key: r.task.key, reason: r.error }] : []));
  const reason = stopped instanceof Error ? stopped.message : String(stopped);
  return new Error(
    failedTables.length > 0 ? `${reason}; before that, failed: ${failedTablesText(failedTables)}` : reason,
  );
}
