import type { DuckDBConnection } from '@duckdb/node-api';
import { LakeServiceError } from '../errors.js';
import { looksLikeFile, tableReferences, type TableReference } from './table-refs.js';

/**
 * DuckDB's own parser has the last word on a statement's shape: exactly one, reading no file by path. Parse only:
 * nothing is bound, so no table or file is touched. Refusals are 400s with the spec's codes; a statement DuckDB
 * cannot parse rejects with DuckDB's error. The statement type is checked after prepare, by the runner.
 */
export async function inspectStatement(connection: DuckDBConnection, statement: string): Promise<TableReference[]> {
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
  return named;
}
