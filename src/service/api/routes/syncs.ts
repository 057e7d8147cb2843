import type { Hono } from 'hono';
import { LakeServiceError } from '../../errors.js';
import { checkIdempotencyKey } from '../../idempotency.js';
import type { ApiEnv } from '../env.js';
import { readJsonObject } from '../json-body.js';
import { authenticate } from '../middleware/authenticate.js';
import { streamJobEvents, streamUrlBody } from './job-events.js';

export function syncRoutes(app: Hono<ApiEnv>): void {
  app.post('/sources/:id/sync', authenticate({ anyScope: ['apps:manage'] }), async (c) => {
    const { syncs, visibility } = c.get('services');
    const sourceId = c.req.param('id');
    const key = checkIdempotencyKey(c.req.header('Idempotency-Key'));
    const outcome = syncs.submit(c.get('principal'), sourceId, await readJsonObject(c), key);
    c.header('Location', `/jobs/${outcome.id}`);
    if (outcome.replayed) c.header('Idempotent-Replayed', 'true');
    return c.json(visibility.syncSummary(c.get('principal'), syncs.summary(outcome.id)), 202);
  });

  /**
   * The source's latest sync as Server-Sent Events. Ids are `<sync id>:<number>`; a Last-Event-ID of an older sync
   * of the source starts over at the latest one, which (with GET /sources/{id}) is authoritative after a reconnect.
   */
  app.post('/sources/:id/sync/stream_url', authenticate({ anyScope: ['data:read'] }), (c) => {
    const source = c.get('services').sources.get(c.get('principal'), c.req.param('id'));
    return c.json(streamUrlBody(c, `/sources/${source.id}/sync/stream`));
  });

  app.get('/sources/:id/sync/stream', authenticate({ anyScope: ['data:read'], allowStreamToken: true }), (c) => {
    const { sources, syncs, jobs, visibility } = c.get('services');
    const principal = c.get('principal');
    const source = sources.get(principal, c.req.param('id'));
    const latest = syncs.store.latestId(source.id);
    const header = c.req.header('Last-Event-ID');
    let after = 0;
    if (header !== undefined) {
      const match = /^(sync_[0-9a-z]+):(\d{1,15})$/.exec(header.trim());
      const known = match ? syncs.store.get(match[1] as string) : undefined;
      if (!match || known?.sourceId !== source.id || (latest !== undefined && match[1] === latest && Number(match[2]) > jobs.store.lastSeq(latest))) {
        throw new LakeServiceError('invalid_last_event_id', `Last-Event-ID '${header.trim().slice(0, 64)}' is not an event id of this source's sync stream.`, { param: 'Last-Event-ID' });
      }
      if (match[1] === latest) after = Number(match[2]);
    }
    if (!latest) return c.body(null, 204);
    return streamJobEvents(c, latest, after, (seq) => `${latest}:${seq}`, (type, data) => visibility.syncEvent(principal, source.id, type, data));
  });
}
