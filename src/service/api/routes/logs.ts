import type { Hono } from 'hono';
import { LakeServiceError } from '../../errors.js';
import type { ApiEnv } from '../env.js';
import { authenticate } from '../middleware/authenticate.js';
import { listBody, readPageRequest } from '../pagination.js';

export function logRoutes(app: Hono<ApiEnv>): void {
  app.get('/logs', authenticate({ anyScope: ['logs:read'] }), (c) => {
    const page = readPageRequest(c, { limit: 50, max: 200 });
    const since = c.req.query('since');
    if (since !== undefined && !/^\d{1,12}$/.test(since)) throw new LakeServiceError('parameter_invalid', 'since must be epoch seconds.', { param: 'since' });
    const result = c.get('services').logs.list(
      c.get('principal'),
      { source: c.req.query('source'), kind: c.req.query('kind'), since: since === undefined ? undefined : Number(since) },
      page.limit,
      page.startingAfter,
    );
    return c.json(
      listBody({
        data: c.get('services').visibility.logEntries(c.get('principal'), result.data).map((e) => ({ object: 'log_entry', id: e.id, source: e.sourceId, kind: e.kind, table: e.table, message: e.message, details: e.details, created: e.created })),
        hasMore: result.hasMore,
      }),
    );
  });
}
