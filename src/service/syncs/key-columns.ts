import type { SourceTable } from '../connectors/types.js';

/**
 * Why a table whose syncs merge or compare by its primary key (incremental, delete detection, cdc) cannot be synced
 * now: its key names a column the table does not have (a key set on a table discovery listed no columns for, or a
 * key column since dropped at the source). Undefined when nothing is wrong. Before, such a table failed deep in the
 * merge with a JavaScript TypeError as its reason.
 */
export function keyColumnsProblem(table: SourceTable, columns: readonly string[]): string | undefined {
  if (table.mode === 'full' && table.detectDeletes !== true) return undefined;
  const missing = table.primaryKey.filter((k) => !columns.includes(k));
  if (missing.length === 0) return undefined;
  return `its primary key names ${missing.length === 1 ? 'a column' : 'columns'} the table does not have (${missing.join(', ')}); set the key again (PATCH the source's tables[].primary_key) or sync it in full`;
}

/** Throws keyColumnsProblem's reason, where a table's sync fails by throwing. */
export function checkKeyColumns(table: SourceTable, columns: readonly string[]): void {
  const problem = keyColumnsProblem(table, columns);
  if (problem) throw new Error(problem);
}
