import { mark } from '../../../debug-timing.js';
import type { Hono } from 'hono';
import { LakeServiceError } from '../../errors.js';
import { checkIdempotencyKey } from '../../idempotency.js';
import { queryObject } from '../../queries/views.js';
import type { ApiEnv } from '../env.js';
import { readJsonObject } from '../json-body.js';
import { authenticate } from '../middleware/authenticate.js';
import { integerParam, publicOrigin } from '../request-params.js';

export const INLINE_PAGE_DEFAULT = 100;
export const INLINE_PAGE_MAX = 1000;
/** How long GET /queries/{id}?wait= may hold a request open for a query to finish. */
export const MAX_WAIT_SECONDS = 30;

export function queryRoutes(app: Hono<ApiEnv>): void {
  const auth = authenticate({ anyScope: ['query:read'] });

  app.post('/queries', auth, async (c) => {
    const body = await readJsonObject(c);
    const key = checkIdempotencyKey(c.req.header('Idempotency-Key'));
    const outcome = await c.get('services').queries.submit(c.get('principal'), body, key);
    c.header('Location', `/queries/${outcome.query.id}`);
    if (outcome.replayedResponse !== undefined) {
      c.header('Idempotent-Replayed', 'true');
      return c.json(outcome.replayedResponse as object, 202);
    }
    return c.json(queryObject(outcome.query), 202);
  });

  app.get('/queries/:id', auth, async (c) => {
    const { queries, results } = c.get('services');
    const format = c.req.query('format') ?? 'files';
    if (format !== 'files' && format !== 'inline') {
      throw new LakeServiceError('invalid_format', `format must be files or inline, not '${format.slice(0, 32)}'.`, { param: 'format' });
    }
    const wait = integerParam(c, 'wait', 0, MAX_WAIT_SECONDS, 0);
    const limit = integerParam(c, 'limit', 1, INLINE_PAGE_MAX, INLINE_PAGE_DEFAULT);
    const id = c.req.param('id');
    let query = queries.get(c.get('principal'), id);
    const offset = results.offsetOf(query, c.req.query('starting_after'));
    if (wait > 0 && (query.status === 'running' || query.status === 'queued')) {
      await queries.waitFor(id, wait * 1000);
      query = queries.get(c.get('principal'), id);
    }
    const body = queryObject(query);
    if (query.status !== 'succeeded' || !results.file(query)) return c.json(body);

    if (format === 'files') {
      const signed = results.downloadLink(id);
      return c.json({ ...body, row_count: null, files: [{ url: `${publicOrigin(c)}${signed.path}`, bytes: query.resultBytes, expires: signed.expires }] });
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
      next_cursor: page.hasMore ? results.cursorAt(id, page.end) : null,
    });
  });
}
