/**
 * The data of each Server-Sent Event of GET /jobs/{id}/events and GET /sources/{id}/sync/stream, by event name.
 * Clients ignore fields they do not know; lake never sends one that is not listed here.
 */
import { SyncTable } from './sources.js';
import { Failure, Strict, Timestamp, Type, type Static, type TProperties, type TSchema } from './schema.js';

/** Every event names its job and when it happened. */
const event = <T extends TProperties>(properties: T) =>
  Strict({ job: Type.String({ description: 'The job (query, sync or send run) id.' }), at: Timestamp, ...properties });
const status = (value: string) => event({ status: Type.Literal(value) });
const ended = (value: string) => event({ status: Type.Literal(value), error: Type.Optional(Failure) });

export const JOB_EVENTS = {
  'job.created': event({ status: Type.Union([Type.Literal('queued'), Type.Literal('running')]) }),
  'job.running': status('running'),
  'job.cancel_requested': status('running'),
  'job.succeeded': ended('succeeded'),
  'job.failed': ended('failed'),
  'job.cancelled': ended('cancelled'),
  'sync.progress': event(SyncTable.properties),
  'sync.schema_change': event({
    table: Type.String({ description: '`schema.table` in the source.' }),
    added: Type.Array(Type.String()),
    dropped: Type.Array(Type.String()),
    retyped: Type.Array(Type.String()),
  }),
} as const satisfies Record<string, TSchema>;

export type JobEventName = keyof typeof JOB_EVENTS;
export type JobEventData<N extends JobEventName> = Static<(typeof JOB_EVENTS)[N]>;

export const JOB_EVENT_NAMES = Object.keys(JOB_EVENTS) as JobEventName[];
