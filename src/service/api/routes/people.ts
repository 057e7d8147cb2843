import type { Hono } from 'hono';
import type { ApiEnv } from '../env.js';
import { ORGANIZATION_ROUTES as R } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { listBody } from '../pagination.js';
import { patObject } from '../wire/credentials.js';
import { grantObject, userObject } from '../wire/organizations.js';

/** An organization's people, their tokens, its grants and table permissions: its owners manage them here. */
export function peopleRoutes(app: Hono<ApiEnv>): void {
  mount(app, R.listUsers, async (c, { query }) => {
    const result = await c.get('services').people.list(c.get('principal'), query.limit ?? 20, query.starting_after);
    return c.json(listBody({ data: result.data.map(userObject), hasMore: result.hasMore }));
  });
  mount(app, R.createUser, async (c, { body }) => {
    const user = await c.get('services').people.create(c.get('principal'), body);
    c.header('Location', `/users/${user.id}`);
    return c.json(userObject(user), 201);
  });
  mount(app, R.getUser, async (c, { params }) =>
    c.json(userObject(await c.get('services').people.get(c.get('principal'), params.id))),
  );
  mount(app, R.updateUser, async (c, { params, body }) =>
    c.json(userObject(await c.get('services').people.update(c.get('principal'), params.id, body))),
  );
  mount(app, R.deactivateUser, async (c, { params }) =>
    c.json(userObject(await c.get('services').people.setDeactivated(c.get('principal'), params.id, true))),
  );
  mount(app, R.reactivateUser, async (c, { params }) =>
    c.json(userObject(await c.get('services').people.setDeactivated(c.get('principal'), params.id, false))),
  );
  mount(app, R.createUserToken, async (c, { params, body }) => {
    const issued = await c.get('services').people.issueToken(c.get('principal'), params.id, body);
    return c.json({ ...patObject(issued.record), secret: issued.secret }, 201);
  });
  mount(app, R.listUserTokens, async (c, { params, query }) => {
    const result = await c
      .get('services')
      .people.listTokens(c.get('principal'), params.id, query.limit ?? 20, query.starting_after);
    return c.json(listBody({ data: result.data.map(patObject), hasMore: result.hasMore }));
  });
  mount(app, R.revokeUserToken, async (c, { params }) =>
    c.json(patObject(await c.get('services').people.revokeToken(c.get('principal'), params.id, params.pat))),
  );
  mount(app, R.getTablePermissions, async (c) =>
    c.json({
      object: 'table_permissions' as const,
      enabled: await c.get('services').grants.enabled(c.get('principal')),
    }),
  );
  mount(app, R.setTablePermissions, async (c, { body }) =>
    c.json({
      object: 'table_permissions' as const,
      enabled: await c.get('services').grants.setEnabled(c.get('principal'), body.enabled),
    }),
  );
  mount(app, R.listGrants, async (c) => {
    const grants = await c.get('services').grants.list(c.get('principal'));
    return c.json(listBody({ data: grants.map(grantObject), hasMore: false }));
  });
  mount(app, R.createGrant, async (c, { body }) =>
    c.json(grantObject(await c.get('services').grants.create(c.get('principal'), body)), 201),
  );
  mount(app, R.revokeGrant, async (c, { params }) =>
    c.json(grantObject(await c.get('services').grants.revoke(c.get('principal'), params.id))),
  );
}
