import type { Context, Hono } from 'hono';
import type { ApiEnv } from '../env.js';
import { ORGANIZATION_ROUTES as R } from '../../../contract/routes.js';
import type { OperatorPrincipal } from '../../auth/operator-credentials.js';
import { mount } from '../contract-route.js';
import { listBody } from '../pagination.js';
import { onboardedOwnerObject, organizationObject } from '../wire/organizations.js';

/** Set by the operator's authentication, which every route here requires. */
const operatorOf = (c: Context<ApiEnv>): OperatorPrincipal => c.get('operator') as OperatorPrincipal;

export function organizationRoutes(app: Hono<ApiEnv>): void {
  mount(app, R.createOrganization, async (c, { body }) => {
    const created = await c.get('services').organizations.create(operatorOf(c), body);
    c.header('Location', `/organizations/${created.organization.id}`);
    return c.json(
      {
        ...organizationObject(created.organization),
        ...(created.owner ? { owner: onboardedOwnerObject(created.owner) } : {}),
      },
      201,
    );
  });
  mount(app, R.listOrganizations, async (c, { query }) => {
    const organizations = c.get('services').organizations;
    if (query.starting_after !== undefined) await organizations.cursor(query.starting_after);
    const result = await organizations.list(query.limit ?? 20, query.starting_after);
    return c.json(listBody({ data: result.data.map(organizationObject), hasMore: result.hasMore }));
  });
  mount(app, R.getOrganization, async (c, { params }) =>
    c.json(organizationObject(await c.get('services').organizations.get(params.id))),
  );
  mount(app, R.renameOrganization, async (c, { params, body }) =>
    c.json(organizationObject(await c.get('services').organizations.rename(operatorOf(c), params.id, body.name))),
  );
  mount(app, R.deactivateOrganization, async (c, { params }) =>
    c.json(organizationObject(await c.get('services').organizations.setDeactivated(operatorOf(c), params.id, true))),
  );
  mount(app, R.reactivateOrganization, async (c, { params }) =>
    c.json(organizationObject(await c.get('services').organizations.setDeactivated(operatorOf(c), params.id, false))),
  );
  mount(app, R.addOrganizationOwner, async (c, { params, body }) =>
    c.json(onboardedOwnerObject(await c.get('services').organizations.addOwner(operatorOf(c), params.id, body)), 201),
  );
}
