import type { LakeClient } from '../../service/client/lake-client.js';

export interface JobObject {
  object: 'job';
  id: string;
  kind: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  created: number;
  started: number | null;
  finished: number | null;
  error: { code: string; message: string } | null;
  cancel_requested: boolean;
}

export interface StreamedEvent {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

/** The event names a job stream sends (docs/api.md); EventSource delivers only the names it listens for. */
export const JOB_EVENT_NAMES = ['job.created', 'job.running', 'job.cancel_requested', 'job.succeeded', 'job.failed', 'job.cancelled', 'sync.progress', 'sync.schema_change'];
const TERMINAL = new Set(['job.succeeded', 'job.failed', 'job.cancelled']);

/**
 * Follows a job's event stream until its final event. EventSource reconnects by itself with Last-Event-ID when the
 * server ends a stream (every ~2 minutes), so the caller sees one unbroken sequence. When the stream ends for good
 * (final event, 204, or an error), GET /jobs/{id} gives the authoritative final state, or the API's error.
 */
export async function followJob(client: LakeClient, id: string, onEvent: (event: StreamedEvent) => void): Promise<JobObject> {
  await followStream(client, `/jobs/${encodeURIComponent(id)}/events`, onEvent);
  return client.get<JobObject>(`/jobs/${encodeURIComponent(id)}`);
}

/** Follows any job-style event stream until its final event or until the server says there is nothing more. */
export async function followStream(client: LakeClient, path: string, onEvent: (event: StreamedEvent) => void, stop?: AbortSignal): Promise<void> {
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
