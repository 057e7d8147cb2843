import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';

describe.each(TRANSPORTS)('personal access tokens over $name', (transport) => {
  let api: Harness;
  beforeEach(async () => {
    api = await transport.start();
  });
  afterEach(async () => {
    await api.close();
  });

  const create = (body: object, token?: string) =>
    api.request('/pats', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' },
      token,
    });

  it('creates a token shown once, lists it without the secret, and revokes it so it fails at once', async () => {
    const created = await create({ name: 'ci', scopes: ['query:read', 'jobs:read'], expires_in_days: 30 });
    expect(created.status).toBe(201);
    const token = (await created.json()) as Record<string, any>;
    expect(created.headers.get('location')).toBe(`/pats/${token.id}`);
    expect(token).toMatchObject({
      object: 'personal_access_token',
      name: 'ci',
      scopes: ['query:read', 'jobs:read'],
      revoked: null,
    });
    expect(token.secret).toMatch(/^pat_/);
    expect(token.expires - token.created).toBe(30 * 86_400);

    expect((await api.request('/whoami', { token: token.secret })).status).toBe(200);

    const list = (await (await api.request('/pats')).json()) as Record<string, any>;
    expect(list.object).toBe('list');
    expect(list.data.map((t: any) => t.id)).toContain(token.id);
    expect(JSON.stringify(list)).not.toContain(token.secret);
    expect(list.data.every((t: any) => t.secret === undefined)).toBe(true);

    const revoked = (await (await api.request(`/pats/${token.id}/revoke`, { method: 'POST' })).json()) as Record<
      string,
      any
    >;
    expect(revoked.revoked).toEqual(expect.any(Number));
    expect((await api.request('/whoami', { token: token.secret })).status).toBe(401);
  });

  it('never grants scopes the creating token lacks', async () => {
    const narrow = (await (await create({ name: 'narrow', scopes: ['pats:manage', 'query:read'] })).json()) as Record<
      string,
      any
    >;
    const response = await create({ name: 'wider', scopes: ['apps:manage'] }, narrow.secret);
    expect(response.status).toBe(403);
    expect(((await response.json()) as any).error.code).toBe('missing_scope');
  });

  it('pages newest first with has_more and next_cursor', async () => {
    for (let i = 0; i < 5; i++) await create({ name: `t${i}`, scopes: ['query:read'] });
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = (await (
        await api.request(`/pats?limit=2${cursor ? `&starting_after=${cursor}` : ''}`)
      ).json()) as Record<string, any>;
      seen.push(...page.data.map((t: any) => t.id));
      if (!page.has_more) {
        expect(page.next_cursor).toBeNull();
        break;
      }
      cursor = page.next_cursor;
    }
    expect(seen).toHaveLength(6); // five made here plus the home's own owner token
    expect([...seen].sort().reverse()).toEqual(seen);
  });

  it('a service key cannot manage personal access tokens, and another user cannot revoke yours', async () => {
    const key = await api.home.credentials.issue({
      kind: 'service_key',
      organizationId: api.home.organization.id,
      userId: null,
      name: 'k',
      scopes: ['pats:manage'],
    });
    const response = await api.request('/pats', { token: key.secret });
    expect(response.status).toBe(403);
    expect(((await response.json()) as any).error.code).toBe('user_required');

    const other = await api.home.directory.createUser(api.home.organization.id, 'Other', 'member');
    const otherToken = await api.home.credentials.issue({
      kind: 'pat',
      organizationId: api.home.organization.id,
      userId: other.id,
      name: 'o',
      scopes: ['pats:manage'],
    });
    const mine = (await (await create({ name: 'mine', scopes: ['query:read'] })).json()) as Record<string, any>;
    const attempt = await api.request(`/pats/${mine.id}/revoke`, { method: 'POST', token: otherToken.secret });
    expect(attempt.status).toBe(404);
    expect(((await attempt.json()) as any).error.code).toBe('pat_not_found');
  });
});
