import type { Hono } from 'hono';
import type { ApiEnv } from '../env.js';
import { CREDENTIAL_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { listBody } from '../pagination.js';
import { keyObject } from '../wire/credentials.js';

export function keyRoutes(app: Hono<ApiEnv>): void {
  const kinds = [
    [CREDENTIAL_ROUTES.serviceKeys, 'service_key'],
    [CREDENTIAL_ROUTES.teamKeys, 'team_key'],
  ] as const;
  for (const [routes, kind] of kinds) {
    mount(app, routes.create, async (c, { body }) => {
      const issued = await c.get('services').orgKeys.create(c.get('principal'), kind, body);
      c.header('Location', `${routes.list.path}/${issued.record.id}`);
      return c.json({ ...keyObject(issued.record), secret: issued.secret }, 201);
    });
    mount(app, routes.list, async (c, { query }) => {
      const result = await c
        .get('services')
        .orgKeys.list(c.get('principal'), kind, query.limit ?? 20, query.starting_after);
      return c.json(listBody({ data: result.data.map(keyObject), hasMore: result.hasMore }));
    });
    mount(app, routes.revoke, async (c, { params }) =>
      c.json(keyObject(await c.get('services').orgKeys.revoke(c.get('principal'), kind, params.id))),
    );
  }
}
