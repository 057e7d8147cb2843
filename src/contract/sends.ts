import { Failure, Nullable, OneOf, Strict, Timestamp, Type } from './schema.js';

const SetCredentials = Type.Record(Type.String(), Type.Literal('set'), {
  description: 'Which credentials are stored; never their values.',
});

const PostgresDestination = Strict({
  type: Type.Literal('postgres'),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  database: Type.String(),
  ssl_mode: Type.Union([Type.Literal('disable'), Type.Literal('require'), Type.Literal('verify-full')]),
  schema: Type.String(),
  table: Type.String(),
  mode: Type.Union([Type.Literal('upsert'), Type.Literal('replace')]),
  key: Type.Array(Type.String()),
  credentials: SetCredentials,
});

const WebhookDestination = Strict({
  type: Type.Literal('webhook'),
  url: Type.String(),
  format: Type.Union([Type.Literal('json'), Type.Literal('ndjson')]),
  batch_size: Type.Integer({ minimum: 1, maximum: 10000 }),
  credentials: SetCredentials,
});

export const SendRun = Strict(
  {
    object: Type.Literal('send_run'),
    id: Type.String({ pattern: '^snr_' }),
    send: Type.String(),
    status: OneOf(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
    trigger: Type.Union([Type.Literal('manual'), Type.Literal('schedule')]),
    query: Nullable(Type.String({ description: 'The query the run delivered the result of.' })),
    rows_sent: Type.Integer({ minimum: 0 }),
    batches: Type.Integer({ minimum: 0 }),
    created: Timestamp,
    started: Nullable(Timestamp),
    finished: Nullable(Timestamp),
    error: Nullable(Failure),
    job: Type.String(),
  },
  'One delivery of a send (also a job of kind send).',
);

export const Send = Strict(
  {
    object: Type.Literal('send'),
    id: Type.String({ pattern: '^snd_' }),
    name: Type.String(),
    sql: Type.String(),
    destination: Type.Union([PostgresDestination, WebhookDestination]),
    schedule: Nullable(Strict({ every_minutes: Type.Integer({ minimum: 1, maximum: 10080 }) })),
    status: Type.Union([Type.Literal('active'), Type.Literal('paused')]),
    paused: Type.Boolean(),
    next_run: Nullable(Timestamp),
    last_run: Nullable(SendRun),
    created: Timestamp,
    updated: Timestamp,
    signing_secret: Type.Optional(
      Type.String({ description: 'Only in the create response, when the service made the webhook signing secret.' }),
    ),
  },
  'A query whose result is delivered to a database table or a webhook, on demand or on a schedule.',
);

const DestinationInput = Type.Object(
  { type: Type.Union([Type.Literal('postgres'), Type.Literal('webhook')]) },
  {
    additionalProperties: true,
    description:
      'postgres: host, port, database, user, password, ssl_mode, schema, table, mode, key. webhook: url, format, batch_size, secret.',
  },
);
const Schedule = Nullable(
  Type.Object({ every_minutes: Type.Integer({ minimum: 1, maximum: 10080 }) }, { additionalProperties: false }),
);

export const SendCreation = Strict({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  sql: Type.String({ minLength: 1 }),
  destination: DestinationInput,
  schedule: Type.Optional(Schedule),
  paused: Type.Optional(Type.Boolean()),
});

export const SendChange = Strict({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  sql: Type.Optional(Type.String({ minLength: 1 })),
  destination: Type.Optional(DestinationInput),
  schedule: Type.Optional(Schedule),
  paused: Type.Optional(Type.Boolean()),
});

export const SendDeletion = Strict({
  object: Type.Literal('send_deletion'),
  id: Type.String(),
  deleted: Type.Literal(true),
});
