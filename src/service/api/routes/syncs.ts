import type { Hono } from 'hono';
import { checkIdempotencyKey } from '../../idempotency/idempotency.js';
import type { ApiEnv } from '../env.js';
import { SOURCE_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { syncObject } from '../wire/sources.js';
import { streamJobEvents, streamUrlBody } from './job-events.js';

const { startSync, createSyncStreamUrl, streamSync } = SOURCE_ROUTES;

export function syncRoutes(app: Hono<ApiEnv>): void {
  mount(app, startSync, async (c, { params, body }) => {
    const key = checkIdempotencyKey(c.req.header('Idempotency-Key'));
    const { sync, replayed } = await c
      .get('services')
      .syncs.submit(
        c.get('principal'),
        params.id,
        { tables: body.tables ?? null, fullRefresh: body.full_refresh ?? false },
        key,
      );
    c.header('Location', `/jobs/${sync.id}`);
    if (replayed) c.header('Idempotent-Replayed', 'true');
    return c.json(syncObject(sync), 202);
  });

  /**
   * The source's latest sync as Server-Sent Events. Ids are `<sync id>:<number>`; a Last-Event-ID of an older sync
   * of the source starts over at the latest one, which (with GET /sources/{id}) is authoritative after a reconnect.
   */
  mount(app, createSyncStreamUrl, async (c, { params }) => {
    const source = await c.get('services').sources.get(c.get('principal'), params.id);
    return c.json(streamUrlBody(c, `/sources/${source.id}/sync/stream`));
  });

  mount(app, streamSync, async (c, { params }) => {
    const feed = await c.get('services').syncs.openStream(c.get('principal'), params.id, c.req.header('Last-Event-ID'));
    return feed ? streamJobEvents(c, feed) : c.body(null, 204);
  });
}
