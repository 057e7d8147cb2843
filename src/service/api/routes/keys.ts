import type { Hono } from 'hono';
import type { OrgKeyKind } from '../../auth/org-keys.js';
import type { CredentialRecord } from '../../auth/credentials.js';
import type { ApiEnv } from '../env.js';
import { readJsonObject } from '../json-body.js';
import { authenticate } from '../middleware/authenticate.js';
import { listBody, readPageRequest } from '../pagination.js';

function keyObject(record: CredentialRecord): Record<string, unknown> & { id: string } {
  return {
    object: record.kind === 'team_key' ? 'team_api_key' : 'service_key',
    id: record.id,
    name: record.name,
    hint: record.secretHint,
    ...(record.kind === 'service_key' ? { scopes: record.scopes } : {}),
    created: record.created,
    expires: record.expires,
    last_used: record.lastUsed,
    revoked: record.revoked,
  };
}

export function keyRoutes(app: Hono<ApiEnv>): void {
  const auth = authenticate({ anyScope: ['keys:manage'] });
  for (const [path, kind] of [['/service-keys', 'service_key'], ['/team-keys', 'team_key']] as [string, OrgKeyKind][]) {
    app.post(path, auth, async (c) => {
      const issued = c.get('services').orgKeys.create(c.get('principal'), kind, await readJsonObject(c));
      c.header('Location', `${path}/${issued.record.id}`);
      return c.json({ ...keyObject(issued.record), secret: issued.secret }, 201);
    });
    app.get(path, auth, (c) => {
      const page = readPageRequest(c, { limit: 20, max: 100 });
      const result = c.get('services').orgKeys.list(c.get('principal'), kind, page.limit, page.startingAfter);
      return c.json(listBody({ data: result.data.map(keyObject), hasMore: result.hasMore }));
    });
    app.post(`${path}/:id/revoke`, auth, (c) => c.json(keyObject(c.get('services').orgKeys.revoke(c.get('principal'), kind, c.req.param('id')))));
  }
}
