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
});

export const QueryFormat = Type.Union([Type.Literal('files'), Type.Literal('inline')], { default: 'files' });
