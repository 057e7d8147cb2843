import type { Hono } from 'hono';
import type { ApiEnv } from '../env.js';
import { SERVICE_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { listBody } from '../pagination.js';

export function auditRoutes(app: Hono<ApiEnv>): void {
  mount(app, SERVICE_ROUTES.listAuditEvents, async (c, { query }) => {
    const result = await c.get('services').audit.list(
      c.get('operator') ?? c.get('principal'),
      {
        action: query.action,
        actor: query.actor,
        since: query.since,
        until: query.until,
        organization: query.organization,
      },
      query.limit ?? 50,
      query.starting_after,
    );
    return c.json(
      listBody({
        data: result.data.map((e) => ({
          object: 'audit_event',
          id: e.id,
          created: e.created,
          action: e.action,
          organization: e.organizationId,
          actor: {
            kind: e.actor.kind,
            credential: e.actor.credentialId,
            user: e.actor.userId,
            request_id: e.actor.requestId,
            client_address: e.actor.clientAddress,
          },
          target: e.target,
          details: e.details,
        })),
        hasMore: result.hasMore,
      }),
    );
  });
}
