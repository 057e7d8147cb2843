import { mark } from '../../support/debug-timing.js';
import type { DuckDBConnection } from '@duckdb/node-api';
import { LakeServiceError } from '../core/errors.js';
import { dynamicPivot } from './pivot.js';
import { withoutSettingAdvice } from './duckdb.js';
import { looksLikeFile, tableReferences, type TableReference } from './table-refs.js';

/**
 * Table functions a query may call: generators and the catalog's own listings. Any other (file and metadata readers
 * such as parquet_full_metadata, histogram('schema.table', …) which reads a table named in a string, whatever a
 * newer DuckDB adds) is refused: an allow list, so an unknown function is never let through.
 */
const ALLOWED_TABLE_FUNCTIONS: ReadonlySet<string> = new Set([
  'range',
  'generate_series',
  'unnest',
  'repeat',
  'repeat_row',
  'json_each',
  'json_tree',
  'duckdb_tables',
  'duckdb_columns',
  'duckdb_schemas',
  'duckdb_types',
  'duckdb_functions',
  'duckdb_keywords',
  'duckdb_constraints',
  'duckdb_indexes',
  'duckdb_sequences',
  'duckdb_dependencies',
  'duckdb_optimizers',
  'pragma_table_info',
  'pragma_show',
  'pragma_version',
]);

/** Catalog tables that hold view definitions, which hold the server's file paths. */
const VIEW_DEFINITIONS =
  /^(views|pg_views|pg_matviews|sqlite_master|sqlite_schema|sqlite_temp_master|sqlite_temp_schema|duckdb_views)$/i;

/**
 * DuckDB's own parser has the last word on a statement's shape: exactly one, reading no file by path. Parse only:
 * nothing is bound, so no table or file is touched. Refusals are 400s with the spec's codes; a statement DuckDB
 * cannot parse rejects with DuckDB's error. The statement type is checked after prepare, by the runner.
 */
export async function inspectStatement(connection: DuckDBConnection, statement: string): Promise<TableReference[]> {
  // Table references come from the parse tree alone, before binding, which would already try to open a file. The
  // same parse counts the statements; only a statement it cannot serialize is parsed again, to tell several
  // statements (multiple_statements) from one that is no SELECT.
  let parsed: Awaited<ReturnType<typeof tableReferences>>;
  // A PIVOT without its values is parsed with a stand-in value: it names the same tables.
  const pivot = dynamicPivot(statement);
  try {
    parsed = await tableReferences(
      connection,
      pivot ? pivot.withValues(pivot.valueQueries.map(() => [''])) : statement,
    );
  } catch (error) {
    // The serializer's message has no position; DuckDB's splitter gives the same error with its LINE n: excerpt
    // and caret. A statement it can split is checked for being one.
    const split = await connection.extractStatements(statement).then(
      (extracted) => extracted.count,
      (splitError: unknown) => splitError,
    );
    if (typeof split !== 'number') throw new Error(parseMessage(split));
    assertOneStatement(split);
    throw error;
  }
  assertOneStatement(parsed.statementCount);
  const { references, cteNames, tableFunctions } = parsed;
  mark('inspect: parsed');
  const refused = tableFunctions.find((name) => !ALLOWED_TABLE_FUNCTIONS.has(name));
  if (refused) {
    throw new LakeServiceError(
      'forbidden_function',
      `The table function '${refused.slice(0, 64)}' is not allowed: only range, generate_series, unnest and the catalog listings are. Query lake tables by name, as lake.<schema>.<table>.`,
      {
        param: 'sql',
      },
    );
  }
  const named = references.filter((ref) => !(ref.catalog === '' && ref.schema === '' && cteNames.has(ref.table)));
  const definitions = named.find(
    (ref) =>
      VIEW_DEFINITIONS.test(ref.table) &&
      (ref.table.toLowerCase() !== 'views' || ref.schema.toLowerCase() === 'information_schema'),
  );
  if (definitions) {
    throw new LakeServiceError(
      'forbidden_function',
      `'${definitions.table}' shows view definitions, which name the server's files; it is not available. The catalog describes every table and view.`,
      {
        param: 'sql',
      },
    );
  }
  const file = named.find(looksLikeFile);
  if (file) {
    throw new LakeServiceError(
      'forbidden_function',
      `'${file.table.slice(0, 80)}' would be read as a file; reading files by path is not allowed. Query lake tables by name, as lake.<schema>.<table>.`,
      {
        param: 'sql',
      },
    );
  }
  return named;
}

function assertOneStatement(count: number): void {
  if (count !== 1) {
    throw new LakeServiceError(
      'multiple_statements',
      'The SQL holds more than one statement. Send one statement per query.',
      { param: 'sql' },
    );
  }
}

/** The splitter's parse error as DuckDB words it for the statement alone: "Parser Error: … LINE 1: … ^". */
function parseMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return withoutSettingAdvice(message.replace(/^Failed to extract statements: /, '')).trimEnd();
}
