import { Failure, Nullable, OneOf, Strict, Timestamp, Type } from './schema.js';

export const QueryStatus = OneOf(['queued', 'running', 'succeeded', 'failed', 'cancelled'], {
  description: 'queued and cancelled are job statuses a query also takes (docs/api.md, "States").',
});

export const ResultFile = Strict(
  {
    url: Type.String({ description: 'Signed download URL; needs no authentication; supports HTTP range requests.' }),
    bytes: Type.Integer({ minimum: 0 }),
    expires: Timestamp,
  },
  'A result file (Parquet).',
);

/** Labels for cost attribution (Databricks query_tags, Snowflake query_tag, BigQuery labels). */
export const QueryTags = Type.Array(
  Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[A-Za-z0-9_.:/=@+-]+$',
    description: 'Letters, digits and _ . : / = @ + -; for example team:finance.',
  }),
  { maxItems: 10, uniqueItems: true, description: 'At most 10 tags; usage sums by tag (GET /usage, by_tag).' },
);

/** The types a parameter may be given as (Databricks' names); without one, a value is a STRING. */
export const PARAMETER_TYPES = [
  'STRING',
  'INTEGER',
  'BIGINT',
  'DECIMAL',
  'DOUBLE',
  'BOOLEAN',
  'DATE',
  'TIMESTAMP',
] as const;

/** A value for one of the statement's parameters (Databricks' shape). */
export const QueryParameterValue = Strict(
  {
    name: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$',
        description: 'For `$name` in the SQL; without names, values go to `?` and `$1`, `$2`, … in order.',
      }),
    ),
    value: Nullable(Type.String({ maxLength: 65_536, description: 'The value as text; null for SQL NULL.' })),
    type: Type.Optional(
      OneOf([...PARAMETER_TYPES], {
        default: 'STRING',
        description: 'How the text is read (by DuckDB); a STRING takes the type its place in the SQL asks for.',
      }),
    ),
  },
  'A parameter value, bound when the query runs; never written into the SQL.',
);

/**
 * The query object. Result fields depend on the format asked for: `files` with format=files, `columns`, `data`,
 * `has_more` and `next_cursor` with format=inline, and only on a succeeded query.
 */
export const Query = Strict(
  {
    object: Type.Literal('query'),
    id: Type.String({ pattern: '^qr_' }),
    status: QueryStatus,
    created: Timestamp,
    sql: Type.String({
      description: 'The submitted statement; longer than 1,000 characters it is cut, with an ellipsis.',
    }),
    livemode: Type.Literal(true),
    schema: Type.Optional(Type.String({ description: 'The default schema it was asked with (when one was).' })),
    parameters: Type.Optional(
      Type.Array(QueryParameterValue, { description: 'The parameter values it was asked with (when any were).' }),
    ),
    timeout_seconds: Type.Optional(
      Type.Integer({ minimum: 1, description: 'The time limit it runs under, when it was asked for one (capped).' }),
    ),
    row_limit: Type.Optional(Type.Integer({ minimum: 0, description: 'The row limit it was asked with.' })),
    byte_limit: Type.Optional(Type.Integer({ minimum: 1, description: 'The byte limit it was asked with.' })),
    tags: Type.Optional(QueryTags),
    dry_run: Type.Optional(Type.Literal(true, { description: 'Checked and bound, not run: it has columns, no rows.' })),
    truncated: Type.Optional(
      Type.Boolean({ description: 'Succeeded queries: true when row_limit or byte_limit cut rows from the result.' }),
    ),
    result_columns: Type.Optional(
      Type.Array(Strict({ name: Type.String(), type: Type.String({ description: 'The DuckDB type.' }) }), {
        description: 'Succeeded queries: the result’s columns with their types, in order.',
      }),
    ),
    duration_ms: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 0,
          description: 'Finished queries: execution time only; null for one cancelled before it ran.',
        }),
      ),
    ),
    error: Type.Optional(Failure),
    row_count: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    files: Type.Optional(Type.Array(ResultFile)),
    columns: Type.Optional(Type.Array(Type.String())),
    data: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
    has_more: Type.Optional(Type.Boolean()),
    next_cursor: Type.Optional(Nullable(Type.String())),
  },
  'A query: its status, and its result once it succeeded.',
);

export const QuerySubmission = Strict({
  sql: Type.String({ description: 'One read-only SELECT statement, at most 100,000 characters.' }),
  schema: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'The lake schema unqualified table names resolve in (one the caller can read).',
    }),
  ),
  parameters: Type.Optional(
    Type.Array(QueryParameterValue, {
      maxItems: 256,
      description: 'Values for the statement’s parameters: `$name` by name, `?` and `$1` in order.',
    }),
  ),
  timeout_seconds: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 31_536_000,
      description: 'Stop the query after this long; the server’s own limit caps it.',
    }),
  ),
  row_limit: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 1e15,
      description: 'Keep at most this many rows; `truncated` says when rows were cut.',
    }),
  ),
  byte_limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1e15,
      description:
        'Keep the first rows whose result file fits in this many bytes; `truncated` says when rows were cut.',
    }),
  ),
  tags: Type.Optional(QueryTags),
  dry_run: Type.Optional(
    Type.Boolean({
      description:
        'Check and bind the statement without running it: the answer (200) has its columns and types, or its error.',
    }),
  ),
});

export const QueryFormat = Type.Union([Type.Literal('files'), Type.Literal('inline')], { default: 'files' });

/** What the signed links of format=files serve: the Parquet file, or the result as CSV (lake's addition). */
export const ResultFileFormat = OneOf(['parquet', 'csv', 'arrow', 'arrow_zstd'], {
  default: 'parquet',
  description:
    "Lake's addition, with format=files: the files' form. csv is RFC 4180 with a header, arrow an Arrow IPC stream, arrow_zstd the same with zstd-compressed bodies and repetitive text as dictionaries; each made once from the Parquet.",
});
