import type { Hono } from 'hono';
import type { ApiEnv } from '../env.js';
import { CREDENTIAL_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { listBody } from '../pagination.js';
import { patObject } from '../wire/credentials.js';

const {
  createPersonalAccessToken: createToken,
  listPersonalAccessTokens: listTokens,
  revokePersonalAccessToken: revokeToken,
} = CREDENTIAL_ROUTES;

export function patRoutes(app: Hono<ApiEnv>): void {
  mount(app, createToken, async (c, { body }) => {
    const issued = await c.get('services').personalTokens.create(c.get('principal'), body);
    c.header('Location', `/pats/${issued.record.id}`);
    return c.json({ ...patObject(issued.record), secret: issued.secret }, 201);
  });

  mount(app, listTokens, async (c, { query }) => {
    const result = await c
      .get('services')
      .personalTokens.list(c.get('principal'), query.limit ?? 20, query.starting_after);
    return c.json(listBody({ data: result.data.map(patObject), hasMore: result.hasMore }));
  });

  mount(app, revokeToken, async (c, { params }) => {
    const record = await c.get('services').personalTokens.revoke(c.get('principal'), params.id);
    return c.json(patObject(record));
  });
}
