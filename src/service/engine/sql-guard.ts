import { LakeServiceError } from '../errors.js';
import { SqlTokenizeError, tokenize, type Token } from './sql-tokenizer.js';

export const MAX_SQL_LENGTH = 100_000;

/**
 * Words that start a write, DDL or session statement. Outside literals and comments they refuse the SQL. Words
 * that are also common column names (start, comment, release…) are left out: DuckDB's statement type, checked
 * after parsing, refuses those statements anyway.
 */
export const WRITE_KEYWORDS: ReadonlySet<string> = new Set([
  'insert', 'update', 'delete', 'merge', 'upsert', 'create', 'drop', 'alter', 'truncate', 'copy', 'attach', 'detach',
  'install', 'load', 'set', 'reset', 'pragma', 'call', 'export', 'import', 'vacuum', 'checkpoint', 'analyze', 'begin',
  'commit', 'rollback', 'abort', 'use', 'grant', 'revoke', 'prepare', 'execute', 'deallocate',
]);

/** Table functions that run SQL or read a table named in a string; refused when called, allowed as column names. */
const FORBIDDEN_WHEN_CALLED: ReadonlySet<string> = new Set(['query', 'query_table']);

/**
 * Functions that reach files, storage, the environment or other tables by name. Refused wherever the name appears,
 * string literals and comments included, so no quoting trick can smuggle one past the check.
 */
const FORBIDDEN_FUNCTION_PATTERN = new RegExp(
  [
    String.raw`read_[\p{L}\p{N}_]*`, // read_parquet, read_csv(_auto), read_json(_auto|_objects…), read_text, read_blob, read_ndjson…
    String.raw`[\p{L}\p{N}_]*_scan`, // parquet_scan, sqlite_scan, postgres_scan, iceberg_scan, delta_scan, json_scan…
    String.raw`parquet_[\p{L}\p{N}_]*`, // parquet_metadata, parquet_schema, parquet_file_metadata, parquet_kv_metadata…
    'glob', 'sniff_csv', 'getenv', 'current_setting', 'duckdb_settings', 'duckdb_secrets',
    'duckdb_extensions', 'duckdb_databases', 'which_secret', 'load_aws_credentials', 'copy_database', 'export_database',
    String.raw`iceberg_[\p{L}\p{N}_]*`, String.raw`delta_[\p{L}\p{N}_]*`, String.raw`ducklake_[\p{L}\p{N}_]*`,
    String.raw`json_(execute_serialized_sql|serialize_sql|deserialize_sql|serialize_plan)`, // run SQL assembled from strings
    'pragma_database_list', 'pragma_storage_info', 'pragma_metadata_info', 'pragma_platform', 'pragma_user_agent',
  ]
    .map((p) => `(?<![\\p{L}\\p{N}_])${p}(?![\\p{L}\\p{N}_])`)
    .join('|'),
  'iu',
);

/** Storage URIs refused anywhere in the text. The spec names gs, s3 and file; the others are DuckDB's own schemes. */
const STORAGE_URI_PATTERN = /\b(gs|gcs|s3|s3a|s3n|r2|az|azure|abfss|hf|file):\/\//i;

export interface GuardedSql {
  /** The statement without a trailing semicolon, ready to be wrapped. */
  statement: string;
  tokens: Token[];
}

/**
 * The first line of the sandbox: refuses, before anything runs, SQL that is too long, holds more than one
 * statement, names a file or storage function or URI, or uses a write, DDL or session keyword. The engine then
 * checks DuckDB's own parse and statement type.
 */
export function guardSql(sql: string): GuardedSql {
  if (sql.length > MAX_SQL_LENGTH) {
    throw new LakeServiceError('sql_too_long', `The SQL is ${sql.length.toLocaleString('en-US')} characters; the limit is 100,000.`, { param: 'sql' });
  }
  let tokens: Token[];
  try {
    tokens = tokenize(sql);
  } catch (error) {
    if (error instanceof SqlTokenizeError) throw new LakeServiceError('parameter_invalid', `The SQL cannot be read: ${error.message}`, { param: 'sql' });
    throw error;
  }
  const semicolons = tokens.filter((t) => t.kind === 'semicolon');
  const last = tokens[tokens.length - 1];
  const onlyTrailing = semicolons.length === 0 || (semicolons.length === 1 && last?.kind === 'semicolon');
  if (!onlyTrailing) {
    throw new LakeServiceError('multiple_statements', 'The SQL holds more than one statement. Send one statement per query.', { param: 'sql' });
  }
  const body = last?.kind === 'semicolon' ? tokens.slice(0, -1) : tokens;
  if (body.length === 0) throw new LakeServiceError('parameter_invalid', 'The SQL is empty.', { param: 'sql' });

  const normalized = sql.normalize('NFKC');
  const uri = STORAGE_URI_PATTERN.exec(normalized);
  if (uri) {
    throw new LakeServiceError(
      'forbidden_function',
      `Storage URIs (${uri[1]?.toLowerCase()}://) are not allowed anywhere in the SQL, literals included. To filter a column holding such values, match a substring that leaves out the scheme.`,
      { param: 'sql' },
    );
  }
  const fn = FORBIDDEN_FUNCTION_PATTERN.exec(normalized);
  if (fn) {
    throw new LakeServiceError(
      'forbidden_function',
      `'${fn[0].toLowerCase()}' reads files, storage or settings and is not allowed, even inside a string literal. Query lake tables by name, as lake.<schema>.<table>.`,
      { param: 'sql' },
    );
  }
  const called = body.find(
    (t, i) => (t.kind === 'word' || t.kind === 'quoted_identifier') && FORBIDDEN_WHEN_CALLED.has(t.value.toLowerCase()) && body[i + 1]?.value === '(',
  );
  if (called) {
    throw new LakeServiceError('forbidden_function', `'${called.value.toLowerCase()}()' runs SQL given as text and is not allowed. Write the query directly.`, { param: 'sql' });
  }
  const keyword = body.find((t) => t.kind === 'word' && WRITE_KEYWORDS.has(t.value));
  if (keyword) {
    throw new LakeServiceError(
      'write_not_allowed',
      `'${keyword.value.toUpperCase()}' is a write, DDL or session keyword; only read-only SELECT statements run. (A column with that name can be written as a "quoted identifier".)`,
      { param: 'sql' },
    );
  }
  const end = last?.kind === 'semicolon' ? last.start : sql.length;
  return { statement: sql.slice(0, end), tokens: body };
}
