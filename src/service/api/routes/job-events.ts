import type { Context, Hono } from 'hono';
import type { JOB_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { streamSSE } from 'hono/streaming';
import type { EventFeed } from '../../jobs/job-service.js';
import { JOB_STREAM_TIMING, TERMINAL_EVENTS } from '../../jobs/stream-timing.js';
import type { ApiEnv } from '../env.js';
import { signedStreamPath } from '../../files/url-signer.js';
import { publicOrigin } from '../request-params.js';
import { callerNow, STANDING_TRUSTED_MS } from '../middleware/authenticate.js';
import { LakeServiceError } from '../../core/errors.js';
import { reportUnexpected } from '../error-response.js';
import { STREAM_LIMITS } from '../stream-slots.js';

/**
 * Streams a job's events after `afterSeq` as Server-Sent Events: `retry` first, durable state read every 3 s
 * (events of other processes) and at once for events of this one, a heartbeat comment after 25 s of quiet, the end
 * after the job's final event or shortly before 120 s. `idOf` turns an event's number into its SSE id. A finished
 * job with nothing after `afterSeq` answers 204, which tells EventSource clients to stop reconnecting.
 *
 * The caller is checked again with every state check: nothing is written more than 3 s after its credential, its
 * person and its organization were last seen in good standing and its grants last read. A caller refused now (a
 * token revoked, an organization deactivated, the job or source no longer visible) has the stream ended; the
 * EventSource's reconnect then gets the refusal itself.
 */
export async function streamJobEvents(c: Context<ApiEnv>, feed: EventFeed): Promise<Response> {
  const { jobId, afterSeq, idOf } = feed;
  let view = feed.view;
  const { jobs, clock, closing } = c.get('services');
  if (await jobs.endedBefore(jobId, afterSeq)) return c.body(null, 204);
  const slot = takeStreamSlot(c);
  c.header('Cache-Control', 'no-store');
  c.header('X-Accel-Buffering', 'no');
  return streamSSE(c, async (stream) => {
    const gone = new AbortController();
    stream.onAbort(() => gone.abort());
    const stopOnClose = (): void => gone.abort();
    closing.addEventListener('abort', stopOnClose, { once: true });
    let tick = new AbortController();
    // An event that lands while the events are being read or written (before the next wait has begun) must not be
    // lost: it wakes the wait it cannot reach yet through this flag, so the stream reads again at once instead of
    // waiting the 3 s state check (it did, under load: test/serve/replicas.test.ts).
    let appended = false;
    const unsubscribe = jobs.onEvent(jobId, () => {
      appended = true;
      tick.abort();
    });
    const opened = clock.now();
    let lastWrite = opened;
    let standingCheckedAt = opened;
    let last = afterSeq;
    try {
      await stream.write(`retry: ${JOB_STREAM_TIMING.retryMs}\n\n`);
      while (!gone.signal.aborted) {
        appended = false;
        if (clock.now() - standingCheckedAt >= STANDING_TRUSTED_MS) {
          const seen = await viewNow(c, feed);
          if (!seen) return;
          view = seen;
          standingCheckedAt = clock.now();
        }
        for (const event of await jobs.events(jobId, last)) {
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
        if (appended) continue;
        tick = new AbortController();
        const stopWaiting = (): void => tick.abort();
        gone.signal.addEventListener('abort', stopWaiting, { once: true });
        await clock.sleep(wait, tick.signal);
        gone.signal.removeEventListener('abort', stopWaiting);
      }
    } catch (error) {
      // The headers are sent: the stream just ends (its reconnect gets the error as an answer), and the failure is
      // the server's one log line, not a stack trace on its stderr.
      if (!(error instanceof LakeServiceError)) reportUnexpected(c, error, c.get('log'));
    } finally {
      slot.release();
      unsubscribe();
      closing.removeEventListener('abort', stopOnClose);
    }
  });
}

/** A slot for the caller's stream on this server, or 429 too_many_streams naming the limit it reached. */
function takeStreamSlot(c: Context<ApiEnv>): { release: () => void } {
  const principal = c.get('principal');
  const slot = c.get('streamSlots').take(principal.credentialId, principal.organizationId);
  if ('release' in slot) return slot;
  const [count, holder] =
    slot.refused === 'caller'
      ? [STREAM_LIMITS.perCaller, 'This credential has']
      : [STREAM_LIMITS.perOrganization, 'Your organization has'];
  throw new LakeServiceError(
    'too_many_streams',
    `${holder} ${count} event streams open on this server, the most it may. Close one, or poll GET /jobs/{id} instead, and try again.`,
    { retryAfterSeconds: JOB_STREAM_TIMING.retryMs / 1000 },
  );
}

/** How the stream's caller sees it now; undefined when the caller is refused now (the stream ends). */
async function viewNow(c: Context<ApiEnv>, feed: EventFeed): Promise<EventFeed['view'] | undefined> {
  try {
    return await feed.viewAs(await callerNow(c));
  } catch (error) {
    if (error instanceof LakeServiceError) return undefined;
    throw error;
  }
}

/** GET /jobs/{id}/events: a job's stream; event ids are the events' numbers within the job. */
export function jobEventsRoute(app: Hono<ApiEnv>, route: (typeof JOB_ROUTES)['streamJobEvents']): void {
  mount(app, route, async (c, { params: { id } }) => {
    const feed = await c.get('services').jobs.openStream(c.get('principal'), id, c.req.header('Last-Event-ID'));
    return feed ? streamJobEvents(c, feed) : c.body(null, 204);
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
