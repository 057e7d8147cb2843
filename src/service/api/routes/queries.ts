import { mark } from '../../../support/debug-timing.js';
import type { Hono } from 'hono';
import { QUERY_ROUTES } from '../../../contract/routes.js';
import { checkIdempotencyKey } from '../../idempotency/idempotency.js';
import { queryObject } from '../wire/queries.js';
import { mount } from '../contract-route.js';
import type { ApiEnv } from '../env.js';
import { publicOrigin } from '../request-params.js';
import { listBody } from '../pagination.js';
import { callerNow, STANDING_TRUSTED_MS } from '../middleware/authenticate.js';

const { createQuery: submit, getQuery: get, listQueries: list } = QUERY_ROUTES;

/** How long POST /queries holds a dry run for its answer before answering 202 like any query. */
const DRY_RUN_WAIT_MS = 30_000;

export function queryRoutes(app: Hono<ApiEnv>): void {
  mount(app, list, async (c, { query }) => {
    const { limit = 20, starting_after: startingAfter } = query;
    const page = await c.get('services').queries.list(
      c.get('principal'),
      {
        ...(query.status !== undefined ? { status: query.status } : {}),
        ...(query.created_after !== undefined ? { createdAfter: query.created_after } : {}),
        ...(query.created_before !== undefined ? { createdBefore: query.created_before } : {}),
        ...(query.creator !== undefined ? { creator: query.creator } : {}),
        ...(query.q !== undefined ? { text: query.q } : {}),
        ...(query.tag !== undefined ? { tag: query.tag } : {}),
      },
      limit,
      startingAfter,
    );
    return c.json(listBody({ data: page.data.map((q) => queryObject(q)), hasMore: page.hasMore }));
  });

  mount(app, submit, async (c, { body }) => {
    const key = checkIdempotencyKey(c.req.header('Idempotency-Key'));
    const { sql, schema, parameters } = body;
    const { queries } = c.get('services');
    const outcome = await queries.submit(
      c.get('principal'),
      {
        sql,
        ...(schema !== undefined ? { schema } : {}),
        ...(parameters !== undefined ? { parameters } : {}),
        ...(body.timeout_seconds !== undefined ? { timeoutSeconds: body.timeout_seconds } : {}),
        ...(body.row_limit !== undefined ? { rowLimit: body.row_limit } : {}),
        ...(body.byte_limit !== undefined ? { byteLimit: body.byte_limit } : {}),
        ...(body.dry_run === true ? { dryRun: true } : {}),
        ...(body.tags !== undefined ? { tags: body.tags } : {}),
      },
      key,
    );
    c.header('Location', `/queries/${outcome.query.id}`);
    if (outcome.replayed) c.header('Idempotent-Replayed', 'true');
    if (body.dry_run !== true) return c.json(queryObject(outcome.query), 202);
    // A dry run reads nothing, so it is answered when it ends (binding takes milliseconds; a queue may not).
    await queries.waitFor(outcome.query.id, DRY_RUN_WAIT_MS);
    const ended = await queries.get(c.get('principal'), outcome.query.id);
    if (ended.status === 'queued' || ended.status === 'running') return c.json(queryObject(ended), 202);
    return c.json({ ...queryObject(ended), ...(ended.status === 'succeeded' ? { row_count: 0 } : {}) }, 200);
  });

  mount(app, get, async (c, { params, query: options }) => {
    const { queries, results } = c.get('services');
    const { format = 'files', wait = 0, limit = 100 } = options;
    let query = await queries.get(c.get('principal'), params.id);
    const offset = results.offsetOf(query, options.starting_after);
    if (wait > 0 && (query.status === 'running' || query.status === 'queued')) {
      const waiting = performance.now();
      await queries.waitFor(params.id, wait * 1000);
      // After a long wait the answer is for the caller as it is now: a token revoked meanwhile gets its 401.
      const caller = performance.now() - waiting >= STANDING_TRUSTED_MS ? await callerNow(c) : c.get('principal');
      query = await queries.get(caller, params.id);
    }
    const body = queryObject(query);
    if (query.status !== 'succeeded' || !results.file(query)) return c.json(body);

    if (format === 'files') {
      const fileFormat = options.file_format ?? 'parquet';
      const signed = results.downloadLink(params.id);
      const bytes = fileFormat === 'parquet' ? query.resultBytes : (await results.fileIn(query, fileFormat)).size;
      const url = `${publicOrigin(c)}${signed.path}${fileFormat === 'parquet' ? '' : `&file_format=${fileFormat}`}`;
      return c.json({ ...body, row_count: null, files: [{ url, bytes, expires: signed.expires }] });
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
