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

/** Statements that describe tables rather than read them. */
const INTROSPECTION_STATEMENTS: ReadonlySet<string> = new Set(['show', 'describe', 'summarize']);

/**
 * A credential restricted by table permissions reads tables, it does not list them: the catalog endpoints show it
 * what it may see. Any SQL that lists or describes tables is refused before it runs.
 */
export function assertNoIntrospection(tokens: readonly Token[]): void {
  const first = tokens[0];
  const found =
    tokens.find(
      (t) =>
        (t.kind === 'word' || t.kind === 'quoted_identifier') &&
        (INTROSPECTION_NAMES.has(t.value.toLowerCase()) ||
          (t.kind === 'word' && INTROSPECTION_STATEMENTS.has(t.value))),
    ) ?? (first?.kind === 'word' && first.value === 'desc' ? first : undefined);
  if (found) {
    throw new LakeServiceError(
      'grant_introspection_denied',
      `This credential is limited by table permissions and may not list or describe tables through SQL ('${found.value.toLowerCase()}'). Browse the catalog instead: it lists the tables this credential may read.`,
    );
  }
}
