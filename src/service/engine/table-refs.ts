import type { DuckDBConnection } from '@duckdb/node-api';
import { LakeServiceError } from '../core/errors.js';
import { quoteLiteral } from './duckdb.js';
import { readTree } from './sql-tree.js';

export interface TableReference {
  catalog: string;
  schema: string;
  table: string;
}

/**
 * A table name DuckDB would resolve by reading a file (a "replacement scan"): a path, a glob, or a name with a file
 * suffix, also when something follows it (`x.csv?a`, `x.parquet#1`: DuckDB strips or globs such tails).
 */
const FILE_LIKE =
  /[/\\?*#]|\.(csv|tsv|txt|parquet|json|jsonl|ndjson|gz|zst|zstd|xlsx|arrow|feather|duckdb|db|sqlite|avro|orc)(\W|$)/i;

export function looksLikeFile(reference: TableReference): boolean {
  return FILE_LIKE.test(reference.table);
}

/**
 * Every table a SELECT statement names, from DuckDB's own parse tree (json_serialize_sql): in joins, USING joins,
 * subqueries and CTE bodies alike. CTE names appear as tables too; callers that care filter them with cteNames.
 */
export async function tableReferences(
  connection: DuckDBConnection,
  statement: string,
): Promise<{ statementCount: number; references: TableReference[]; cteNames: Set<string>; tableFunctions: string[] }> {
  // A literal, not a bound parameter: one statement to run instead of a prepare and an execute.
  const reader = await connection.runAndReadAll(`SELECT json_serialize_sql(${quoteLiteral(statement)}) AS tree`);
  const tree = readTree(String(reader.getRows()[0]?.[0])) as {
    error?: boolean;
    error_type?: string;
    error_message?: string;
    statements?: unknown[];
  };
  if (tree.error) {
    // Only SELECT-type statements serialize (DESCRIBE, SHOW and SUMMARIZE among them): anything else is refused
    // here, from the parse alone, before any engine prepares it.
    if (tree.error_type === 'not implemented') {
      throw new LakeServiceError(
        'write_not_allowed',
        'Only read-only SELECT statements run; this statement is of another type.',
        { param: 'sql' },
      );
    }
    throw new Error(tree.error_message ?? 'The statement could not be parsed.');
  }
  const references: TableReference[] = [];
  const cteNames = new Set<string>();
  const tableFunctions: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const child of node) walk(child);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    const called = record.function as { function_name?: unknown } | undefined;
    if (record.type === 'TABLE_FUNCTION' && typeof called?.function_name === 'string')
      tableFunctions.push(called.function_name.toLowerCase());
    if (record.type === 'BASE_TABLE' && typeof record.table_name === 'string') {
      references.push({
        catalog: String(record.catalog_name ?? ''),
        schema: String(record.schema_name ?? ''),
        table: record.table_name,
      });
    }
    const cteMap = record.cte_map as { map?: { key?: string }[] } | undefined;
    for (const entry of cteMap?.map ?? []) if (typeof entry.key === 'string') cteNames.add(entry.key);
    for (const value of Object.values(record)) walk(value);
  };
  walk(tree);
  return { statementCount: tree.statements?.length ?? 0, references, cteNames, tableFunctions };
}
