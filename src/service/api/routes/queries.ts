import { mark } from '../../../support/debug-timing.js';
import type { Hono } from 'hono';
import { QUERY_ROUTES } from '../../../contract/routes.js';
import { checkIdempotencyKey } from '../../idempotency/idempotency.js';
import { queryObject } from '../wire/queries.js';
import { mount } from '../contract-route.js';
import type { ApiEnv } from '../env.js';
import { publicOrigin } from '../request-params.js';

const { createQuery: submit, getQuery: get } = QUERY_ROUTES;

export function queryRoutes(app: Hono<ApiEnv>): void {
  mount(app, submit, async (c, { body }) => {
    const key = checkIdempotencyKey(c.req.header('Idempotency-Key'));
    const { sql, schema, parameters } = body;
    const outcome = await c
      .get('services')
      .queries.submit(
        c.get('principal'),
        { sql, ...(schema !== undefined ? { schema } : {}), ...(parameters !== undefined ? { parameters } : {}) },
        key,
      );
    c.header('Location', `/queries/${outcome.query.id}`);
    if (outcome.replayed) c.header('Idempotent-Replayed', 'true');
    return c.json(queryObject(outcome.query), 202);
  });

  mount(app, get, async (c, { params, query: options }) => {
    const { queries, results } = c.get('services');
    const { format = 'files', wait = 0, limit = 100 } = options;
    let query = await queries.get(c.get('principal'), params.id);
    const offset = results.offsetOf(query, options.starting_after);
    if (wait > 0 && (query.status === 'running' || query.status === 'queued')) {
      await queries.waitFor(params.id, wait * 1000);
      query = await queries.get(c.get('principal'), params.id);
    }
    const body = queryObject(query);
    if (query.status !== 'succeeded' || !results.file(query)) return c.json(body);

    if (format === 'files') {
      const signed = results.downloadLink(params.id);
      return c.json({
        ...body,
        row_count: null,
        files: [{ url: `${publicOrigin(c)}${signed.path}`, bytes: query.resultBytes, expires: signed.expires }],
      });
    }
    mark('GET /queries: query ended');
    const page = await results.page(query, offset, limit);
    mark('page read');
    return c.json({
      ...body,
      row_count: query.rowCount ?? 0,
      columns: (query.columns ?? []).map((column: { name: string }) => column.name),
      data: page.rows,
      has_more: page.hasMore,
      next_cursor: page.hasMore ? results.cursorAt(params.id, page.end) : null,
    });
  });
}
