import type { Hono } from 'hono';
import { CONNECTORS, findConnector, refusalFor } from '../../connectors/registry.js';
import type { Connector } from '../../connectors/types.js';
import { LakeServiceError } from '../../errors.js';
import type { SourceRecord } from '../../sources/source-store.js';
import type { ApiEnv } from '../env.js';
import { SOURCE_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { listBody } from '../pagination.js';

const { listConnectors, getConnector, listSources, createSource, getSource, updateSource, deleteSource, testSource } = SOURCE_ROUTES;

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
  mount(app, listConnectors, (c) => c.json({ object: 'list', data: CONNECTORS.map(connectorObject), has_more: false, next_cursor: null }));
  mount(app, getConnector, (c, { params }) => {
    const connector = findConnector(params.name);
    if (!connector) throw new LakeServiceError('route_not_found', `There is no connector '${params.name.slice(0, 64)}'. GET /connectors lists them.`);
    return c.json(connectorObject(connector));
  });

  mount(app, listSources, (c, { query }) => {
    const { sources, syncSummaries, visibility } = c.get('services');
    const principal = c.get('principal');
    const result = sources.list(principal, query.limit ?? 20, query.starting_after);
    return c.json(listBody({ data: result.data.map((s) => sourceObject(visibility.source(principal, s), visibility.syncSummary(principal, syncSummaries(s.id)))), hasMore: result.hasMore }));
  });

  mount(app, createSource, async (c, { body }) => {
    const { sources, visibility } = c.get('services');
    const { connector, name, config, ...credentials } = body;
    const source = await sources.create(c.get('principal'), { connector, name, config, credentials });
    c.header('Location', `/sources/${source.id}`);
    return c.json(sourceObject(visibility.source(c.get('principal'), source)), 201);
  });

  mount(app, getSource, (c, { params }) => {
    const { sources, syncSummaries, visibility } = c.get('services');
    const principal = c.get('principal');
    const source = sources.get(principal, params.id);
    return c.json(sourceObject(visibility.source(principal, source), visibility.syncSummary(principal, syncSummaries(source.id))));
  });

  mount(app, updateSource, async (c, { params, body }) => {
    const { sources, syncSummaries, visibility } = c.get('services');
    const principal = c.get('principal');
    const { name, paused, config, tables, ...credentials } = body;
    const source = await sources.update(principal, params.id, { name, paused, config, tables, credentials });
    return c.json(sourceObject(visibility.source(principal, source), visibility.syncSummary(principal, syncSummaries(source.id))));
  });

  mount(app, deleteSource, (c, { params: { id } }) => {
    c.get('services').sources.delete(c.get('principal'), id);
    return c.json({ object: 'source_deletion', id, deleted: true, data_retained: true });
  });

  mount(app, testSource, async (c, { params: { id } }) => {
    const outcome = await c.get('services').sources.test(c.get('principal'), id);
    return c.json({ object: 'source_test', source: id, supported: outcome.supported, ok: outcome.ok, reason: outcome.reason });
  });
}
