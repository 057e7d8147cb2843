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
});

export const QueryFormat = Type.Union([Type.Literal('files'), Type.Literal('inline')], { default: 'files' });
