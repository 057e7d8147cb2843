import type { Hono } from 'hono';
import { CONNECTORS, findConnector, refusalFor } from '../../connectors/registry.js';
import type { Connector } from '../../connectors/types.js';
import { LakeServiceError } from '../../errors.js';
import type { SourceRecord } from '../../sources/source-store.js';
import type { ApiEnv } from '../env.js';
import { readJsonObject } from '../json-body.js';
import { authenticate } from '../middleware/authenticate.js';
import { listBody, readPageRequest } from '../pagination.js';

/** The source object: everything but credential values, which it only says are set. */
export function sourceObject(source: SourceRecord, latestSync: object | null = null): Record<string, unknown> & { id: string } {
  return {
    object: 'source',
    id: source.id,
    name: source.name,
    connector: source.connector,
    lake_schema: source.lakeSchema,
    status: source.paused ? 'paused' : 'active',
    paused: source.paused,
    created: source.created,
    updated: source.updated,
    config: source.config,
    credentials: Object.fromEntries(source.secretsSet.map((name) => [name, 'set'])),
    latest_sync: latestSync,
    tables: source.tables.map((t) => ({
      schema: t.schema,
      name: t.name,
      enabled: t.enabled,
      mode: t.mode,
      cursor_column: t.cursorColumn,
      primary_key: t.primaryKey,
      estimated_rows: t.estimatedRows,
      columns: t.columns,
    })),
    discovered: source.discovered,
    last_test: source.lastTest,
  };
}

function connectorObject(connector: Connector): object {
  const refusal = refusalFor(connector);
  return {
    object: 'connector',
    name: connector.name,
    title: connector.title,
    auth: connector.auth,
    syncs: connector.syncs,
    staff_only: connector.staffOnly,
    alias_of: connector.aliasOf ?? null,
    live_test: connector.test !== undefined,
    accepted_by_post_sources: refusal === undefined,
    ...(refusal ? { refusal } : {}),
    fields: connector.fields.map((f) => ({
      name: f.name,
      type: f.type,
      required: f.required,
      credential: f.secret,
      description: f.description,
      ...(f.default === undefined ? {} : { default: f.default }),
      ...(f.min === undefined ? {} : { min: f.min, max: f.max }),
      ...(f.choices ? { choices: f.choices } : {}),
    })),
  };
}

export function sourceRoutes(app: Hono<ApiEnv>): void {
  const read = authenticate({ anyScope: ['data:read'] });
  const manage = authenticate({ anyScope: ['apps:manage'] });

  app.get('/connectors', read, (c) => c.json({ object: 'list', data: CONNECTORS.map(connectorObject), has_more: false, next_cursor: null }));
  app.get('/connectors/:name', read, (c) => {
    const connector = findConnector(c.req.param('name'));
    if (!connector) throw new LakeServiceError('route_not_found', `There is no connector '${c.req.param('name').slice(0, 64)}'. GET /connectors lists them.`);
    return c.json(connectorObject(connector));
  });

  app.get('/sources', read, (c) => {
    const page = readPageRequest(c, { limit: 20, max: 100 });
    const { sources, syncSummaries, visibility } = c.get('services');
    const principal = c.get('principal');
    const result = sources.list(principal, page.limit, page.startingAfter);
    return c.json(listBody({ data: result.data.map((s) => sourceObject(visibility.source(principal, s), visibility.syncSummary(principal, syncSummaries(s.id)))), hasMore: result.hasMore }));
  });

  app.post('/sources', manage, async (c) => {
    const { sources, visibility } = c.get('services');
    const source = await sources.create(c.get('principal'), await readJsonObject(c));
    c.header('Location', `/sources/${source.id}`);
    return c.json(sourceObject(visibility.source(c.get('principal'), source)), 201);
  });

  app.get('/sources/:id', read, (c) => {
    const { sources, syncSummaries, visibility } = c.get('services');
    const principal = c.get('principal');
    const source = sources.get(principal, c.req.param('id'));
    return c.json(sourceObject(visibility.source(principal, source), visibility.syncSummary(principal, syncSummaries(source.id))));
  });

  app.patch('/sources/:id', manage, async (c) => {
    const { sources, syncSummaries, visibility } = c.get('services');
    const principal = c.get('principal');
    const source = await sources.update(principal, c.req.param('id'), await readJsonObject(c));
    return c.json(sourceObject(visibility.source(principal, source), visibility.syncSummary(principal, syncSummaries(source.id))));
  });

  app.delete('/sources/:id', manage, (c) => {
    const id = c.req.param('id');
    c.get('services').sources.delete(c.get('principal'), id);
    return c.json({ object: 'source_deletion', id, deleted: true, data_retained: true });
  });

  app.post('/sources/:id/test', manage, async (c) => {
    const outcome = await c.get('services').sources.test(c.get('principal'), c.req.param('id'));
    return c.json({ object: 'source_test', source: c.req.param('id'), supported: outcome.supported, ok: outcome.ok, reason: outcome.reason });
  });
}
