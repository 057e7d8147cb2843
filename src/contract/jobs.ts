import { QueryStatus, ResultFile } from './queries.js';
import { Failure, Nullable, Strict, Timestamp, Type } from './schema.js';

export const JobKind = Type.Union([Type.Literal('query'), Type.Literal('sync'), Type.Literal('send')]);

export const Job = Strict(
  {
    object: Type.Literal('job'),
    id: Type.String({ description: 'The id of the query (qr_), sync (sync_) or send run (snr_) the job is.' }),
    kind: JobKind,
    status: QueryStatus,
    created: Timestamp,
    started: Nullable(Timestamp),
    finished: Nullable(Timestamp),
    error: Nullable(Failure),
    cancel_requested: Type.Boolean(),
    resource: Nullable(Type.String({ description: 'The path of the query a query job is; null for other kinds.' })),
    sql: Nullable(Type.String({ description: "A query job's SQL (lake's addition); null for other kinds." })),
    tags: Type.Optional(
      Type.Array(Type.String(), { description: "A query job's tags, when it was asked with any (lake's addition)." }),
    ),
  },
  'A unit of asynchronous work: a query, a sync or a send run.',
);

export const JobResult = Strict({
  object: Type.Literal('job_result'),
  job: Type.String(),
  row_count: Nullable(Type.Integer({ minimum: 0 })),
  files: Type.Array(ResultFile),
});

export const JobCancellation = Strict({
  object: Type.Literal('job_cancellation'),
  job: Job,
  execution_may_continue: Type.Boolean({
    description: 'True while the work has been told to stop but has not yet stopped.',
  }),
});

export const StreamUrl = Strict(
  {
    object: Type.Literal('stream_url'),
    url: Type.String({
      description: 'Opens this one stream as the calling credential, with no Authorization header (for EventSource).',
    }),
    expires: Timestamp,
  },
  'A short-lived URL for one event stream.',
);
