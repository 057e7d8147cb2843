import { LakeServiceError } from '../core/errors.js';
import { matchParameters, type QueryParameter, type StatementParameter } from './parameters.js';
import { SqlTokenizeError, tokenize, type Token } from './sql-tokenizer.js';
import { groupDigits } from '../../support/group-digits.js';

export const MAX_SQL_LENGTH = 100_000;

/**
 * Words that start a write, DDL or session statement. Outside literals and comments they refuse the SQL. Words
 * that are also common column names (start, comment, release…) are left out: DuckDB's statement type, checked
 * after parsing, refuses those statements anyway.
 */
export const WRITE_KEYWORDS: ReadonlySet<string> = new Set([
  'insert',
  'update',
  'delete',
  'merge',
  'upsert',
  'create',
  'drop',
  'alter',
  'truncate',
  'copy',
  'attach',
  'detach',
  'install',
  'load',
  'set',
  'reset',
  'pragma',
  'call',
  'export',
  'import',
  'vacuum',
  'checkpoint',
  'analyze',
  'begin',
  'commit',
  'rollback',
  'abort',
  'use',
  'grant',
  'revoke',
  'prepare',
  'execute',
  'deallocate',
]);

/** Table functions that run SQL or read a table named in a string; refused when called, allowed as column names. */
const FORBIDDEN_WHEN_CALLED: ReadonlySet<string> = new Set(['query', 'query_table']);

/**
 * Functions that reach files, storage, the environment or settings, or run SQL assembled from strings. Refused
 * wherever the name appears, string literals and comments included, so no quoting trick can smuggle one past the
 * check. Names are listed exactly rather than by prefix, so columns such as read_count or delta_amount stay usable;
 * a file function missing here still meets the engine sandbox.
 */
const FORBIDDEN_NAMES: ReadonlySet<string> = new Set([
  'read_csv',
  'read_csv_auto',
  'read_json',
  'read_json_auto',
  'read_json_objects',
  'read_json_objects_auto',
  'read_ndjson',
  'read_ndjson_auto',
  'read_ndjson_objects',
  'read_parquet',
  'read_text',
  'read_blob',
  'read_xlsx',
  'read_duckdb',
  'read_avro',
  'read_sqlite',
  'parquet_scan',
  'parquet_metadata',
  'parquet_schema',
  'parquet_file_metadata',
  'parquet_kv_metadata',
  'parquet_bloom_probe',
  'sqlite_scan',
  'sqlite_attach',
  'postgres_scan',
  'postgres_scan_pushdown',
  'postgres_query',
  'postgres_attach',
  'mysql_scan',
  'mysql_query',
  'iceberg_scan',
  'iceberg_metadata',
  'iceberg_snapshots',
  'delta_scan',
  'arrow_scan',
  'json_scan',
  'csv_scan',
  'glob',
  'sniff_csv',
  'getenv',
  'current_setting',
  'duckdb_settings',
  'duckdb_secrets',
  'duckdb_extensions',
  'duckdb_databases',
  'which_secret',
  'load_aws_credentials',
  'copy_database',
  'export_database',
  'json_execute_serialized_sql',
  'json_serialize_sql',
  'json_deserialize_sql',
  'json_serialize_plan',
  'pragma_database_list',
  'pragma_storage_info',
  'pragma_metadata_info',
  'pragma_platform',
  'pragma_user_agent',
  'parquet_full_metadata',
  'duckdb_views',
  'duckdb_temporary_files',
  'duckdb_external_file_cache',
  'duckdb_logs',
  'duckdb_log_contexts',
  'pg_get_viewdef',
  'histogram_values',
]);

const WORDS = /[\p{L}\p{N}_]+/gu;

/** The first forbidden function name anywhere in the text: one linear pass over its words. */
function findForbiddenName(text: string): string | undefined {
  for (const match of text.toLowerCase().matchAll(WORDS)) {
    const word = match[0];
    if (FORBIDDEN_NAMES.has(word) || word.startsWith('ducklake_')) return word;
  }
  return undefined;
}

/** Storage URIs refused anywhere in the text. The spec names gs, s3 and file; the others are DuckDB's own schemes. */
const STORAGE_URI_PATTERN = /\b(gs|gcs|s3|s3a|s3n|r2|az|azure|abfss|hf|file):\/\//i;

export interface GuardedSql {
  /** The statement without a trailing semicolon, ready to be wrapped; for an EXPLAIN, the SELECT it explains. */
  statement: string;
  tokens: Token[];
  /** `EXPLAIN` (the plan) or `EXPLAIN ANALYZE` (the plan, run, with its timings) of that SELECT. */
  explain?: 'plan' | 'analyze';
}

/** What a statement's parameters may be: refused (SQL kept to run later as written), or matched to these values. */
export interface GuardOptions {
  parameters?: readonly QueryParameter[];
}

/** `EXPLAIN [ANALYZE]` before the statement: how many tokens it takes, and which it is. */
function explainPrefix(body: readonly Token[]): { length: number; explain?: 'plan' | 'analyze' } {
  if (body[0]?.kind !== 'word' || body[0].value !== 'explain') return { length: 0 };
  return body[1]?.kind === 'word' && body[1].value === 'analyze'
    ? { length: 2, explain: 'analyze' }
    : { length: 1, explain: 'plan' };
}

/**
 * The first line of the sandbox: refuses, before anything runs, SQL that is too long, holds more than one
 * statement, names a file or storage function or URI, or uses a write, DDL or session keyword. The engine then
 * checks DuckDB's own parse and statement type.
 */
export function guardSql(sql: string, options: GuardOptions = {}): GuardedSql {
  if (sql.length > MAX_SQL_LENGTH) {
    throw new LakeServiceError(
      'sql_too_long',
      `The SQL is ${groupDigits(sql.length)} characters; the limit is 100,000.`,
      { param: 'sql' },
    );
  }
  // DuckDB reads SQL as a C string: it would stop at a NUL, so the guard and the engine would not see the same text.
  const nul = sql.indexOf('\u0000');
  if (nul >= 0)
    throw new LakeServiceError(
      'parameter_invalid',
      `The SQL holds a NUL character (at position ${nul + 1}); no statement can contain one.`,
      { param: 'sql' },
    );
  let tokens: Token[];
  try {
    tokens = tokenize(sql);
  } catch (error) {
    if (error instanceof SqlTokenizeError)
      throw new LakeServiceError('parameter_invalid', `The SQL cannot be read: ${error.message}`, { param: 'sql' });
    throw error;
  }
  const semicolons = tokens.filter((t) => t.kind === 'semicolon');
  const last = tokens[tokens.length - 1];
  const onlyTrailing = semicolons.length === 0 || (semicolons.length === 1 && last?.kind === 'semicolon');
  if (!onlyTrailing) {
    throw new LakeServiceError(
      'multiple_statements',
      'The SQL holds more than one statement. Send one statement per query.',
      { param: 'sql' },
    );
  }
  const whole = last?.kind === 'semicolon' ? tokens.slice(0, -1) : tokens;
  // EXPLAIN and EXPLAIN ANALYZE of a SELECT run in the same sandbox as the SELECT; the rest is checked as one.
  const prefix = explainPrefix(whole);
  const body = whole.slice(prefix.length);
  if (body.length === 0)
    throw new LakeServiceError(
      'parameter_invalid',
      prefix.explain ? 'EXPLAIN needs the SELECT to explain.' : 'The SQL is empty.',
      { param: 'sql' },
    );

  const normalized = sql.normalize('NFKC');
  const uri = STORAGE_URI_PATTERN.exec(normalized);
  if (uri) {
    throw new LakeServiceError(
      'forbidden_function',
      `Storage URIs (${uri[1]?.toLowerCase()}://) are not allowed anywhere in the SQL, literals included. To filter a column holding such values, match a substring that leaves out the scheme.`,
      { param: 'sql' },
    );
  }
  const fn = findForbiddenName(normalized);
  if (fn) {
    throw new LakeServiceError(
      'forbidden_function',
      `'${fn}' reads files, storage or settings and is not allowed, even inside a string literal. Query lake tables by name, as lake.<schema>.<table>.`,
      { param: 'sql' },
    );
  }
  const called = body.find(
    (t, i) =>
      (t.kind === 'word' || t.kind === 'quoted_identifier') &&
      FORBIDDEN_WHEN_CALLED.has(t.value.toLowerCase()) &&
      body[i + 1]?.value === '(',
  );
  if (called) {
    throw new LakeServiceError(
      'forbidden_function',
      `'${called.value.toLowerCase()}()' runs SQL given as text and is not allowed. Write the query directly.`,
      { param: 'sql' },
    );
  }
  const keyword = body.find((t) => t.kind === 'word' && WRITE_KEYWORDS.has(t.value));
  if (keyword) {
    throw new LakeServiceError(
      'write_not_allowed',
      `'${keyword.value.toUpperCase()}' is a write, DDL or session keyword; only read-only SELECT statements run. (A column with that name can be written as a "quoted identifier".)`,
      { param: 'sql' },
    );
  }
  // $1, ? and $name: values come with the query (`parameters`), bound when it runs; without them, refused.
  const found = statementParameters(body);
  if (options.parameters) matchParameters(found, options.parameters);
  else if (found.length > 0) {
    throw new LakeServiceError(
      'parameter_invalid',
      `'${(found[0] as StatementParameter).text.slice(0, 40)}' is a statement parameter and no value is given for it. Send the values as parameters (lake query -p), or write them into the SQL.`,
      { param: 'sql' },
    );
  }
  const end = last?.kind === 'semicolon' ? last.start : sql.length;
  const start = prefix.length > 0 ? (body[0] as Token).start : 0;
  return { statement: sql.slice(start, end), tokens: body, ...(prefix.explain ? { explain: prefix.explain } : {}) };
}

/** The statement's parameters, in order: `$name`, `$n`, and `?` (numbered as DuckDB numbers them, 1, 2, …). */
function statementParameters(body: readonly Token[]): StatementParameter[] {
  const found: StatementParameter[] = [];
  let questionMarks = 0;
  body.forEach((t, i) => {
    const next = body[i + 1];
    if (t.kind === 'parameter') found.push({ kind: 'positional', index: Number(t.value.slice(1)), text: t.value });
    else if (t.kind === 'symbol' && t.value === '?')
      found.push({ kind: 'positional', index: ++questionMarks, text: '?' });
    else if (t.kind === 'symbol' && t.value === '$' && next?.start === t.end && next.kind === 'word')
      found.push({ kind: 'named', name: next.value, text: `$${next.value}` });
  });
  return found;
}
