import type { SendObject, SendRunObject } from '../../../contract/types.js';
import type { SendRunView, SendView } from '../../sends/send-service.js';

/** A run: its job's status and times, with what only a send run has (trigger, query, rows and batches delivered). */
export function sendRunObject({ run, job }: SendRunView): SendRunObject {
  return {
    object: 'send_run',
    id: run.id,
    send: run.sendId,
    status: job?.status ?? 'failed',
    trigger: run.trigger,
    query: run.queryId,
    rows_sent: run.rowsSent,
    batches: run.batches,
    created: run.created,
    started: job?.started ?? null,
    finished: job?.finished ?? null,
    error: job?.errorCode ? { code: job.errorCode, message: job.errorMessage ?? '' } : null,
    job: `/jobs/${run.id}`,
  };
}

/** The send object: the destination without its credentials, which it only says are set. */
export function sendObject({ send, lastRun: last }: SendView): SendObject {
  const lastRun = last && sendRunObject(last);
  return {
    object: 'send',
    id: send.id,
    name: send.name,
    sql: send.sql,
    destination: {
      ...send.destination,
      credentials: Object.fromEntries(send.secretsSet.map((n) => [n, 'set' as const])),
    },
    schedule: send.everyMinutes === null ? null : { every_minutes: send.everyMinutes },
    status: send.paused ? 'paused' : 'active',
    paused: send.paused,
    next_run: send.paused ? null : send.nextRun,
    last_run: lastRun,
    created: send.created,
    updated: send.updated,
  };
}
