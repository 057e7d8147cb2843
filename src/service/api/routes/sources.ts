import type { Hono } from 'hono';
import type { SourceDeletionObject, SourceTestObject } from '../../../contract/types.js';
import { CONNECTORS, findConnector } from '../../connectors/registry.js';
import { LakeServiceError } from '../../core/errors.js';
import type { ApiEnv } from '../env.js';
import { SOURCE_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { listBody } from '../pagination.js';
import { connectorObject, sourceListItem, sourceObject } from '../wire/sources.js';

const { listConnectors, getConnector, listSources, createSource, getSource, updateSource, deleteSource, testSource } =
  SOURCE_ROUTES;

export function sourceRoutes(app: Hono<ApiEnv>): void {
  mount(app, listConnectors, (c) =>
    c.json({ object: 'list', data: CONNECTORS.map(connectorObject), has_more: false, next_cursor: null }),
  );
  mount(app, getConnector, (c, { params }) => {
    const connector = findConnector(params.name);
    if (!connector)
      throw new LakeServiceError(
        'route_not_found',
        `There is no connector '${params.name.slice(0, 64)}'. GET /connectors lists them.`,
      );
    return c.json(connectorObject(connector));
  });

  mount(app, listSources, async (c, { query }) => {
    const page = await c.get('services').sourceViews.list(c.get('principal'), query.limit ?? 20, query.starting_after);
    return c.json(
      listBody({ data: page.data.map((s) => sourceListItem(s.summary, s.latestSync)), hasMore: page.hasMore }),
    );
  });

  mount(app, createSource, async (c, { body }) => {
    const { connector, name, config, schedule, ...credentials } = body;
    const view = await c
      .get('services')
      .sourceViews.create(c.get('principal'), { connector, name, config, schedule, credentials });
    c.header('Location', `/sources/${view.source.id}`);
    return c.json(sourceObject(view.source), 201);
  });

  mount(app, getSource, async (c, { params }) => {
    const view = await c.get('services').sourceViews.get(c.get('principal'), params.id);
    return c.json(sourceObject(view.source, view.latestSync));
  });

  mount(app, updateSource, async (c, { params, body }) => {
    const { name, paused, config, tables, schedule, ...credentials } = body;
    const view = await c
      .get('services')
      .sourceViews.update(c.get('principal'), params.id, { name, paused, config, tables, schedule, credentials });
    return c.json(sourceObject(view.source, view.latestSync));
  });

  mount(app, deleteSource, async (c, { params: { id } }) => {
    await c.get('services').sources.delete(c.get('principal'), id);
    return c.json({ object: 'source_deletion', id, deleted: true, data_retained: true } satisfies SourceDeletionObject);
  });

  mount(app, testSource, async (c, { params: { id } }) => {
    const outcome = await c.get('services').sources.test(c.get('principal'), id);
    return c.json({
      object: 'source_test',
      source: id,
      supported: outcome.supported,
      ok: outcome.ok,
      reason: outcome.reason,
      new_tables: outcome.newTables,
    } satisfies SourceTestObject);
  });
}
