import type { Token } from '../engine/sql-tokenizer.js';
import { LakeServiceError } from '../core/errors.js';

/** Names through which SQL can list tables, schemas or columns (DuckDB's own, and its PostgreSQL and SQLite views). */
const INTROSPECTION_NAMES: ReadonlySet<string> = new Set([
  'information_schema',
  'pg_catalog',
  'pg_class',
  'pg_tables',
  'pg_views',
  'pg_namespace',
  'pg_attribute',
  'pg_attrdef',
  'pg_constraint',
  'pg_index',
  'pg_indexes',
  'pg_database',
  'duckdb_tables',
  'duckdb_columns',
  'duckdb_views',
  'duckdb_schemas',
  'duckdb_constraints',
  'duckdb_indexes',
  'duckdb_dependencies',
  'duckdb_sequences',
  'duckdb_databases',
  'sqlite_master',
  'sqlite_schema',
  'sqlite_temp_master',
  'pragma_table_info',
  'pragma_show',
  'pragma_show_tables',
  'pragma_show_tables_expanded',
  'pragma_database_size',
  'table_info',
  'show_tables',
  'show_tables_expanded',
  'show_databases',
]);

/** What may follow SHOW (or stand after DESCRIBE) to list tables, schemas or databases rather than describe one. */
const LISTINGS: ReadonlySet<string> = new Set(['tables', 'all', 'schemas', 'databases']);

/**
 * A SHOW, DESCRIBE or DESC that lists rather than describes: SHOW TABLES, SHOW ALL TABLES, SHOW SCHEMAS, SHOW
 * DATABASES, or the bare word (DuckDB's DESCRIBE alone lists every table). DESCRIBE and SUMMARIZE of one table, or
 * of a query, read that table and are checked against the grants like any SELECT.
 */
function listingStatement(tokens: readonly Token[]): Token | undefined {
  return tokens.find((t, i) => {
    if (t.kind !== 'word' || !['show', 'describe', 'desc'].includes(t.value)) return false;
    const next = tokens[i + 1];
    if (next === undefined || next.kind === 'semicolon' || next.value === ')') return true;
    return t.value === 'show' && next.kind === 'word' && LISTINGS.has(next.value);
  });
}

/**
 * A credential restricted by table permissions reads tables, it does not list them (the spec's
 * grant_introspection_denied): the catalog endpoints show it what it may see. SQL that lists tables, schemas or
 * columns through the catalog's views is refused before it runs. DESCRIBE and SUMMARIZE of a table it may read are
 * not listings; the grants decide them (docs/decisions.md, 47).
 */
export function assertNoIntrospection(tokens: readonly Token[]): void {
  const found =
    tokens.find(
      (t) => (t.kind === 'word' || t.kind === 'quoted_identifier') && INTROSPECTION_NAMES.has(t.value.toLowerCase()),
    ) ?? listingStatement(tokens);
  if (found) {
    throw new LakeServiceError(
      'grant_introspection_denied',
      `This credential is limited by table permissions and may not list tables through SQL ('${found.value.toLowerCase()}'). Browse the catalog instead: it lists the tables this credential may read; DESCRIBE and SUMMARIZE work on each of them.`,
    );
  }
}
