import type { Hono } from 'hono';
import type { ApiEnv } from '../env.js';
import { SOURCE_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { listBody } from '../pagination.js';

export function logRoutes(app: Hono<ApiEnv>): void {
  mount(app, SOURCE_ROUTES.listLogs, async (c, { query }) => {
    const result = await c
      .get('services')
      .logs.list(
        c.get('principal'),
        { source: query.source, kind: query.kind, since: query.since },
        query.limit ?? 50,
        query.starting_after,
      );
    return c.json(
      listBody({
        data: result.data.map((e) => ({
          object: 'log_entry',
          id: e.id,
          source: e.sourceId,
          kind: e.kind,
          table: e.table,
          message: e.message,
          details: e.details,
          created: e.created,
        })),
        hasMore: result.hasMore,
      }),
    );
  });
}
