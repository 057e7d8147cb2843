import type { Hono } from 'hono';
import { LakeServiceError } from '../../core/errors.js';
import { checkIdempotencyKey } from '../../idempotency/idempotency.js';
import type { ApiEnv } from '../env.js';
import { SOURCE_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { syncObject } from '../wire/sources.js';
import { streamJobEvents, streamUrlBody } from './job-events.js';

const { startSync, createSyncStreamUrl, streamSync } = SOURCE_ROUTES;

export function syncRoutes(app: Hono<ApiEnv>): void {
  mount(app, startSync, async (c, { params, body }) => {
    const { syncs, visibility } = c.get('services');
    const sourceId = params.id;
    const key = checkIdempotencyKey(c.req.header('Idempotency-Key'));
    const outcome = await syncs.submit(
      c.get('principal'),
      sourceId,
      { tables: body.tables ?? null, fullRefresh: body.full_refresh ?? false },
      key,
    );
    c.header('Location', `/jobs/${outcome.id}`);
    if (outcome.replayed) c.header('Idempotent-Replayed', 'true');
    const sync = await visibility.sync(c.get('principal'), await syncs.summary(outcome.id));
    if (!sync) throw new LakeServiceError('job_not_found', `Sync ${outcome.id} is gone.`);
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
    const { sources, syncs, jobs, visibility } = c.get('services');
    const principal = c.get('principal');
    const source = await sources.get(principal, params.id);
    const latest = await syncs.store.latestId(source.id);
    const header = c.req.header('Last-Event-ID');
    let after = 0;
    if (header !== undefined) {
      const match = /^(sync_[0-9a-z]+):(\d{1,15})$/.exec(header.trim());
      const known = match ? await syncs.store.get(match[1] as string) : undefined;
      if (
        !match ||
        known?.sourceId !== source.id ||
        (latest !== undefined && match[1] === latest && Number(match[2]) > (await jobs.store.lastSeq(latest)))
      ) {
        throw new LakeServiceError(
          'invalid_last_event_id',
          `Last-Event-ID '${header.trim().slice(0, 64)}' is not an event id of this source's sync stream.`,
          { param: 'Last-Event-ID' },
        );
      }
      if (match[1] === latest) after = Number(match[2]);
    }
    if (!latest) return c.body(null, 204);
    return streamJobEvents(
      c,
      latest,
      after,
      (seq) => `${latest}:${seq}`,
      (type, data) => visibility.syncEvent(principal, source.id, type, data),
    );
  });
}
