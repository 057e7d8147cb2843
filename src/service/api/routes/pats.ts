import type { Hono } from 'hono';
import type { CredentialRecord } from '../../auth/credentials.js';
import type { ApiEnv } from '../env.js';
import { readJsonObject } from '../json-body.js';
import { authenticate } from '../middleware/authenticate.js';
import { listBody, readPageRequest } from '../pagination.js';

export function patObject(record: CredentialRecord): Record<string, unknown> & { id: string } {
  return {
    object: 'personal_access_token',
    id: record.id,
    name: record.name,
    hint: record.secretHint,
    scopes: record.scopes,
    created: record.created,
    expires: record.expires,
    last_used: record.lastUsed,
    revoked: record.revoked,
  };
}

export function patRoutes(app: Hono<ApiEnv>): void {
  const auth = authenticate({ anyScope: ['pats:manage'] });

  app.post('/pats', auth, async (c) => {
    const body = await readJsonObject(c);
    const issued = c.get('services').personalTokens.create(c.get('principal'), body);
    c.header('Location', `/pats/${issued.record.id}`);
    return c.json({ ...patObject(issued.record), secret: issued.secret }, 201);
  });

  app.get('/pats', auth, (c) => {
    const page = readPageRequest(c, { limit: 20, max: 100 });
    const result = c.get('services').personalTokens.list(c.get('principal'), page.limit, page.startingAfter);
    return c.json(listBody({ data: result.data.map(patObject), hasMore: result.hasMore }));
  });

  app.post('/pats/:id/revoke', auth, (c) => {
    const record = c.get('services').personalTokens.revoke(c.get('principal'), c.req.param('id'));
    return c.json(patObject(record));
  });
}
