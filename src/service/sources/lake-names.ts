import { createHash } from 'node:crypto';
import type { SourceTable } from '../connectors/types.js';

/** Longest lake table or column name: what the catalog accepts for names people type (checkObjectName). */
const MAX_NAME_LENGTH = 128;

/** The column every lake table gets: when its rows were synced. A source's own column of that name is renamed. */
export const SYNCED_AT = '_synced_at';

/** The column that marks a row the source deleted, in the tables of a source with soft deletes. */
export const DELETED_AT = '_deleted_at';

/**
 * A name a source gave, made safe for the lake: control characters and `/` become `_` (a name is typed in SQL and
 * in URL paths, and shown in terminals), and a name longer than 128 characters is cut, with a digest of the whole
 * name, so two long names that share a beginning stay apart.
 */
export function safeLakeName(name: string, unsafe: RegExp = /[\u0000-\u001f\u007f-\u009f/]/g): string {
  const clean = name.replace(unsafe, '_');
  if (clean.length <= MAX_NAME_LENGTH) return clean;
  return `${clean.slice(0, MAX_NAME_LENGTH - 13)}_${createHash('sha256').update(name).digest('hex').slice(0, 12)}`;
}

/**
 * Names made unique the way the engine compares them (case-insensitively): the first of a name keeps it, a later
 * one takes the first free `name_2`, `name_3` … `taken` lists names already used (lower-cased).
 */
export function uniqueNames(names: readonly string[], taken: Iterable<string> = []): string[] {
  const used = new Set([...taken].map((n) => n.toLowerCase()));
  return names.map((name) => {
    let candidate = name;
    for (let n = 2; used.has(candidate.toLowerCase()); n++) {
      const suffix = `_${n}`;
      candidate = `${name.slice(0, MAX_NAME_LENGTH - suffix.length)}${suffix}`;
    }
    used.add(candidate.toLowerCase());
    return candidate;
  });
}

/**
 * Whether a source's tables land under their own names: a PostgreSQL table in `public`, and every table of a
 * source that reads one schema only (a MySQL source's database; the sample). Others are `schema_table`.
 */
export function keepsBareName(connector: string, schema: string): boolean {
  return schema === 'public' || connector === 'sample' || connector === 'mysql';
}

/** The lake table a source table lands in before uniqueness: its name, or `schema_table` (keepsBareName). */
function baseLakeTable(connector: string, table: { schema: string; name: string }): string {
  return safeLakeName(keepsBareName(connector, table.schema) ? table.name : `${table.schema}_${table.name}`);
}

/**
 * The lake table of every table of a source, unique case-insensitively within the source's lake schema: a table
 * keeps the name it was given (stored with the source), and the others get theirs in the source's order, so
 * `"T"` and `t`, or `public.x_y` and `x.y`, land in `T` and `t_2`, `x_y` and `x_y_2`.
 */
export function lakeTableNames(source: {
  connector: string;
  tables: readonly Pick<SourceTable, 'schema' | 'name' | 'lakeTable'>[];
}): Map<string, string> {
  const key = (t: { schema: string; name: string }): string => `${t.schema}.${t.name}`;
  const names = new Map<string, string>();
  const kept = source.tables.filter((t) => t.lakeTable !== undefined);
  uniqueNames(kept.map((t) => t.lakeTable as string)).forEach((name, i) =>
    names.set(key(kept[i] as SourceTable), name),
  );
  const rest = source.tables.filter((t) => t.lakeTable === undefined);
  uniqueNames(
    rest.map((t) => baseLakeTable(source.connector, t)),
    names.values(),
  ).forEach((name, i) => names.set(key(rest[i] as SourceTable), name));
  return names;
}

/** The tables with their lake table recorded, for storing with the source. */
export function withLakeTables<T extends SourceTable>(connector: string, tables: readonly T[]): T[] {
  const names = lakeTableNames({ connector, tables });
  return tables.map((t) => ({ ...t, lakeTable: names.get(`${t.schema}.${t.name}`) as string }));
}

/**
 * A table's column names in the lake: without control characters (a `/` is kept: columns are never in a path),
 * unique case-insensitively, and never `_synced_at`, which lake adds (a source column of that name becomes
 * `_synced_at_2`).
 */
export function lakeColumnNames(names: readonly string[], softDeletes = false): string[] {
  return uniqueNames(
    names.map((n) => safeLakeName(n, /[\u0000-\u001f\u007f-\u009f]/g)),
    softDeletes ? [SYNCED_AT, DELETED_AT] : [SYNCED_AT],
  );
}
