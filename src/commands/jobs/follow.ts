import { JOB_EVENT_NAMES } from '../../contract/events.js';
import { JOB_ROUTES } from '../../contract/routes.js';
import type { JobObject } from '../../contract/types.js';
import { routePath, type LakeClient } from '../../client/lake-client.js';

export { JOB_EVENT_NAMES, type JobObject };

export interface StreamedEvent {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

const TERMINAL = new Set(['job.succeeded', 'job.failed', 'job.cancelled']);

/**
 * Follows a job's event stream until its final event. EventSource reconnects by itself with Last-Event-ID when the
 * server ends a stream (every ~2 minutes), so the caller sees one unbroken sequence. When the stream ends for good
 * (final event, 204, or an error), GET /jobs/{id} gives the authoritative final state, or the API's error.
 */
export async function followJob(
  client: LakeClient,
  id: string,
  onEvent: (event: StreamedEvent) => void,
): Promise<JobObject> {
  await followStream(client, routePath(JOB_ROUTES.streamJobEvents, { id }), onEvent);
  return client.read(JOB_ROUTES.getJob, { params: { id } });
}

/** Follows any job-style event stream until its final event or until the server says there is nothing more. */
export async function followStream(
  client: LakeClient,
  path: string,
  onEvent: (event: StreamedEvent) => void,
  stop?: AbortSignal,
): Promise<void> {
  const { EventSource } = await import('eventsource');
  await new Promise<void>((resolve) => {
    const source = new EventSource(client.url(path), { fetch: client.streamFetch as never });
    const finish = (): void => {
      source.close();
      resolve();
    };
    if (stop?.aborted) finish();
    stop?.addEventListener('abort', finish, { once: true });
    for (const name of JOB_EVENT_NAMES) {
      source.addEventListener(name, (message) => {
        onEvent({ id: message.lastEventId, event: name, data: JSON.parse(message.data) as Record<string, unknown> });
        if (TERMINAL.has(name)) finish();
      });
    }
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) finish();
    };
  });
}
