import type { Context, Hono } from 'hono';
import type { JOB_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { streamSSE } from 'hono/streaming';
import { LakeServiceError } from '../../core/errors.js';
import { TERMINAL_STATUSES } from '../../jobs/job-store.js';
import { JOB_STREAM_TIMING, TERMINAL_EVENTS } from '../../jobs/stream-timing.js';
import type { ApiEnv } from '../env.js';
import { signedStreamPath } from '../../files/url-signer.js';
import { publicOrigin } from '../request-params.js';

/**
 * Streams a job's events after `afterSeq` as Server-Sent Events: `retry` first, durable state read every 3 s
 * (events of other processes) and at once for events of this one, a heartbeat comment after 25 s of quiet, the end
 * after the job's final event or shortly before 120 s. `idOf` turns an event's number into its SSE id. A finished
 * job with nothing after `afterSeq` answers 204, which tells EventSource clients to stop reconnecting.
 */
export async function streamJobEvents(
  c: Context<ApiEnv>,
  jobId: string,
  afterSeq: number,
  idOf: (seq: number) => string,
  /** What the caller may see of an event (undefined leaves it out); everything when absent. */
  view: (
    type: string,
    data: Record<string, unknown>,
  ) => Promise<Record<string, unknown> | undefined> | Record<string, unknown> | undefined = (_type, data) => data,
): Promise<Response> {
  const { jobs, clock, closing } = c.get('services');
  const store = jobs.store;
  const job = await store.getById(jobId);
  if (job && TERMINAL_STATUSES.has(job.status) && (await store.lastSeq(jobId)) <= afterSeq) return c.body(null, 204);
  c.header('Cache-Control', 'no-store');
  c.header('X-Accel-Buffering', 'no');
  return streamSSE(c, async (stream) => {
    const gone = new AbortController();
    stream.onAbort(() => gone.abort());
    const stopOnClose = (): void => gone.abort();
    closing.addEventListener('abort', stopOnClose, { once: true });
    let tick = new AbortController();
    const unsubscribe = store.onEvent(jobId, () => tick.abort());
    const opened = clock.now();
    let lastWrite = opened;
    let last = afterSeq;
    try {
      await stream.write(`retry: ${JOB_STREAM_TIMING.retryMs}\n\n`);
      while (!gone.signal.aborted) {
        for (const event of await store.events(jobId, last)) {
          const data = await view(event.type, event.data as Record<string, unknown>);
          if (data !== undefined)
            await stream.writeSSE({ id: idOf(event.seq), event: event.type, data: JSON.stringify(data) });
          last = event.seq;
          lastWrite = clock.now();
          if (TERMINAL_EVENTS.has(event.type)) return;
        }
        const now = clock.now();
        if (now - opened >= JOB_STREAM_TIMING.closeAfterMs) return;
        if (now - lastWrite >= JOB_STREAM_TIMING.heartbeatMs) {
          await stream.write(': heartbeat\n\n');
          lastWrite = now;
        }
        const wait = Math.max(
          1,
          Math.min(
            JOB_STREAM_TIMING.pollMs,
            JOB_STREAM_TIMING.heartbeatMs - (now - lastWrite),
            JOB_STREAM_TIMING.closeAfterMs - (now - opened),
          ),
        );
        tick = new AbortController();
        const stopWaiting = (): void => tick.abort();
        gone.signal.addEventListener('abort', stopWaiting, { once: true });
        await clock.sleep(wait, tick.signal);
        gone.signal.removeEventListener('abort', stopWaiting);
      }
    } finally {
      unsubscribe();
      closing.removeEventListener('abort', stopOnClose);
    }
  });
}

/** GET /jobs/{id}/events: a job's stream; event ids are the events' numbers within the job. */
export function jobEventsRoute(app: Hono<ApiEnv>, route: (typeof JOB_ROUTES)['streamJobEvents']): void {
  mount(app, route, async (c, { params: { id } }) => {
    const { jobs, syncs, visibility } = c.get('services');
    const principal = c.get('principal');
    const job = await jobs.get(principal, id);
    const sourceId = job.kind === 'sync' ? (await syncs.store.get(id))?.sourceId : undefined;
    let last = 0;
    const header = c.req.header('Last-Event-ID');
    if (header !== undefined) {
      const value = header.trim();
      if (!/^\d{1,15}$/.test(value) || Number(value) > (await c.get('services').jobs.store.lastSeq(id))) {
        throw new LakeServiceError(
          'invalid_last_event_id',
          `Last-Event-ID '${value.slice(0, 32)}' is not an event id of this job's stream.`,
          { param: 'Last-Event-ID' },
        );
      }
      last = Number(value);
    }
    return streamJobEvents(c, id, last, String, (type, data) => visibility.syncEvent(principal, sourceId, type, data));
  });
}

/**
 * The body of POST …/stream_url: a URL that opens the stream at `path` as the calling credential, for five minutes,
 * with no Authorization header (what EventSource needs). The caller has just been shown to be allowed to see it.
 */
export function streamUrlBody(
  c: Context<ApiEnv>,
  path: string,
): { object: 'stream_url'; url: string; expires: number } {
  const signed = signedStreamPath(c.get('services').signer, path, c.get('principal').credentialId);
  return { object: 'stream_url', url: `${publicOrigin(c)}${signed.path}`, expires: signed.expires };
}
