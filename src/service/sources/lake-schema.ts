import type { SourceTable } from '../connectors/types.js';
import { keepsBareName, lakeTableNames, safeLakeName } from './lake-names.js';

/**
 * Schemas no source may take: lake's own (the sample data, operators' views) and the engine's, which a query
 * would otherwise resolve to something else.
 */
const RESERVED = new Set([
  'demo',
  'views',
  'lake',
  'main',
  'memory',
  'temp',
  'system',
  'information_schema',
  'pg_catalog',
  'source',
]);

/** Longest lake schema name: DuckDB takes longer ones, but PostgreSQL and most SQL tools stop at 63 bytes. */
const MAX_SCHEMA_LENGTH = 63;

/**
 * The lake schema a source named `name` writes into: the name in Unicode compatibility form (NFKC, so a
 * full-width "ｓｈｏｐａ" is "shopa"), lowercase, accents removed, every run of other characters one `_`, no `_` at
 * either end. `SHOPA`, `shopa ` and `Shopa!` all give `shopa`: one source may hold it.
 */
export function lakeSchemaFor(name: string): string {
  const slug = name
    .normalize('NFKC')
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, MAX_SCHEMA_LENGTH)
    .replace(/_+$/, '');
  // A schema must not begin with a digit to be written without quotes.
  return /^[0-9]/.test(slug) ? `s_${slug}`.slice(0, MAX_SCHEMA_LENGTH) : slug;
}

/** Why a schema cannot be a new source's, or undefined when it can. */
export function schemaRefusal(schema: string): string | undefined {
  if (schema === '') return 'it has no letters or digits to make a lake schema of';
  if (RESERVED.has(schema)) return `lake schema ${schema} is reserved`;
  return undefined;
}

/** The lake table a source's table lands in (its schema is the source's lake schema); see lakeTableNames. */
export function lakeTableOf(
  source: { connector: string; tables: readonly Pick<SourceTable, 'schema' | 'name' | 'lakeTable'>[] },
  schema: string,
  table: string,
): string {
  return (
    lakeTableNames(source).get(`${schema}.${table}`) ??
    safeLakeName(keepsBareName(source.connector, schema) ? table : `${schema}_${table}`)
  );
}
