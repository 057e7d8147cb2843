import type { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';
import { LakeServiceError } from '../errors.js';
import { loadDuckDB } from './duckdb.js';
import { looksLikeFile, tableReferences, type TableReference } from './table-refs.js';

export interface InspectedSelect {
  prepared: DuckDBPreparedStatement;
  /** Tables and views the statement names, CTE names left out. */
  references: TableReference[];
}

/**
 * DuckDB's own parser has the last word on a statement: exactly one, of SELECT type, reading no file by path.
 * Refusals are 400s with the spec's codes; a statement DuckDB cannot parse or bind rejects with DuckDB's error.
 */
export async function inspectSelect(
  connection: DuckDBConnection,
  statement: string,
  /** Judges the tables named, before DuckDB binds the statement (binding would already touch them). */
  checkReferences: (references: TableReference[]) => void = () => {},
): Promise<InspectedSelect> {
  const duckdb = await loadDuckDB();
  const extracted = await connection.extractStatements(statement);
  if (extracted.count !== 1) {
    throw new LakeServiceError('multiple_statements', 'The SQL holds more than one statement. Send one statement per query.', { param: 'sql' });
  }
  // Table references come from the parse tree alone, before binding, which would already try to open a file.
  const { references, cteNames } = await tableReferences(connection, statement);
  const named = references.filter((ref) => !(ref.catalog === '' && ref.schema === '' && cteNames.has(ref.table)));
  const file = named.find(looksLikeFile);
  if (file) {
    throw new LakeServiceError('forbidden_function', `'${file.table.slice(0, 80)}' would be read as a file; reading files by path is not allowed. Query lake tables by name, as lake.<schema>.<table>.`, {
      param: 'sql',
    });
  }
  checkReferences(named);
  const prepared = await extracted.prepare(0);
  if (prepared.statementType !== duckdb.StatementType.SELECT) {
    const kind = duckdb.StatementType[prepared.statementType] ?? 'other';
    throw new LakeServiceError('write_not_allowed', `Only read-only SELECT statements run; this statement is of type ${kind}.`, { param: 'sql' });
  }
  return { prepared, references: named };
}
