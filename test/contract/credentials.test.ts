import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/service/auth/scopes.js';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { expectError, SLOW_SQL, submit, type Json } from '../helpers/queries.js';
import { waitFor } from '../helpers/wait-for.js';

describe.each(TRANSPORTS)('credentials, scopes and the legacy table download over $name', (transport) => {
  let api: Harness;
  let org: string;
  beforeAll(async () => {
    api = await transport.start();
    org = api.home.organization.id;
  });
  afterAll(async () => {
    await api.close();
  });
  const send = (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    token?: string | null,
  ) =>
    api.request(path, {
      method,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      token,
    });
  const patFor = async (role: 'owner' | 'admin' | 'member', scopes: Scope[] = ['keys:manage']): Promise<string> => {
    const user = role === 'owner' ? api.home.owner : await api.home.directory.createUser(org, role, role);
    return (await api.home.credentials.issue({ kind: 'pat', organizationId: org, userId: user.id, name: role, scopes }))
      .secret;
  };

  it('service keys: owners and admins create them (secret once), list them without secrets, revoke them at once', async () => {
    const created = await send('POST', '/service-keys', { name: 'etl', scopes: ['query:read'], expires_in_days: 30 });
    expect(created.status).toBe(201);
    const key = (await created.json()) as Json;
    expect(key).toMatchObject({
      object: 'service_key',
      id: expect.stringMatching(/^key_/),
      name: 'etl',
      scopes: ['query:read'],
      secret: expect.stringMatching(/^nsk_/),
    });
    expect(created.headers.get('location')).toBe(`/service-keys/${key.id}`);
    expect(((await (await send('GET', '/whoami', undefined, {}, key.secret)).json()) as Json).principal_kind).toBe(
      'service_key',
    );

    const list = (await (await send('GET', '/service-keys')).json()) as Json;
    expect(list.data.map((k: Json) => k.id)).toContain(key.id);
    expect(JSON.stringify(list)).not.toContain(key.secret);

    expect(
      (
        await send(
          'POST',
          '/service-keys',
          { name: 'by admin', scopes: ['query:read'] },
          {},
          await patFor('admin', ['keys:manage', 'query:read']),
        )
      ).status,
    ).toBe(201);
    await expectError(
      await send(
        'POST',
        '/service-keys',
        { name: 'by member', scopes: ['query:read'] },
        {},
        await patFor('member', ['keys:manage', 'query:read']),
      ),
      403,
      'owner_required',
    );
    await expectError(
      await send(
        'POST',
        '/service-keys',
        { name: 'wider', scopes: ['apps:manage'] },
        {},
        await patFor('admin', ['keys:manage']),
      ),
      403,
      'missing_scope',
    );
    await expectError(
      await send('POST', '/service-keys', { scopes: ['query:read'] }),
      400,
      'parameter_missing',
      'name',
    );

    expect(((await (await send('POST', `/service-keys/${key.id}/revoke`)).json()) as Json).revoked).toEqual(
      expect.any(Number),
    );
    await expectError(await send('GET', '/whoami', undefined, {}, key.secret), 401, 'credentials_revoked');
    await expectError(await send('POST', '/service-keys/key_nope/revoke'), 404, 'key_not_found');
  });

  it('a long poll that outlasts its token answers as the caller is now: 401 for a token revoked while it waited', async () => {
    const user = await api.home.directory.createUser(org, 'waiting', 'member');
    const issued = await api.home.credentials.issue({
      kind: 'pat',
      organizationId: org,
      userId: user.id,
      name: 'poller',
      scopes: ['query:read'],
    });
    // Submitted by the owner (every member sees the organization's queries), so the poll is the token's first use.
    const submitted = (await (await submit(api, SLOW_SQL)).json()) as Json;
    const waited = send('GET', `/queries/${submitted.id}?wait=30`, undefined, {}, issued.secret);
    // Revoked once the poll has been authenticated (its credential's first use is noted) and is waiting.
    const used = await waitFor(
      async () => (await api.home.credentials.get(issued.record.id))?.lastUsed ?? null,
      (lastUsed) => lastUsed !== null,
    );
    expect(used).not.toBeNull();
    await api.home.credentials.revoke(issued.record.id);
    // Past the 3 s a request in progress trusts what authentication read, the query ends and the wait with it.
    await new Promise((resolve) => setTimeout(resolve, 3200));
    await send('POST', `/jobs/${submitted.id}/cancel`);
    // Before, the answer was the query as the token could see it when the request began (here: cancelled).
    await expectError(await waited, 401, 'credentials_revoked');
  });

  it('team API keys: only owners create them, many allowed, shown once; a service key may not', async () => {
    const one = (await (await send('POST', '/team-keys', { name: 'legacy one' })).json()) as Json;
    const two = (await (await send('POST', '/team-keys', { name: 'legacy two' })).json()) as Json;
    expect(one).toMatchObject({ object: 'team_api_key', secret: expect.stringMatching(/^tak_/) });
    expect(two.secret).not.toBe(one.secret);
    expect(one).not.toHaveProperty('scopes');
    const list = (await (await send('GET', '/team-keys')).json()) as Json;
    expect(list.data.map((k: Json) => k.id)).toEqual(expect.arrayContaining([one.id, two.id]));
    expect(JSON.stringify(list)).not.toMatch(/tak_[0-9A-Za-z]{20}/);
    await expectError(
      await send('POST', '/team-keys', { name: 'x' }, {}, await patFor('admin')),
      403,
      'owner_required',
    );
    const serviceKey = (
      await api.home.credentials.issue({
        kind: 'service_key',
        organizationId: org,
        userId: null,
        name: 'k',
        scopes: ['keys:manage'],
      })
    ).secret;
    await expectError(await send('POST', '/team-keys', { name: 'x' }, {}, serviceKey), 403, 'owner_required');
    // A team key is not a bearer credential.
    const invalid = await send('GET', '/whoami', undefined, {}, one.secret);
    expect(invalid.headers.get('www-authenticate')).toBe('Bearer realm="lake", error="invalid_token"');
    await expectError(invalid, 401, 'invalid_credentials');
    const missing = await api.request('/whoami', { token: null as never });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="lake"');
    // A token with the right prefix but cut short is told so, not told to start with the prefix it has.
    const short = (await (await send('GET', '/whoami', undefined, {}, 'pat_abc')).json()) as Json;
    expect(short.error.message).not.toContain('Expected a token that starts with');
    expect(short.error.message).toContain('40 letters and digits');
    const who = (await (await send('GET', '/whoami', undefined, { 'x-api-key': one.secret }, null)).json()) as Json;
    expect(who).toMatchObject({
      principal_kind: 'team_key',
      user: null,
      credential: { kind: 'team_key' },
      organization: { id: org },
    });
  });

  it('a missing scope on each endpoint group is 403 missing_scope naming the scope', async () => {
    const bare = (
      await api.home.credentials.issue({
        kind: 'pat',
        organizationId: org,
        userId: api.home.owner.id,
        name: 'bare',
        scopes: [],
      })
    ).secret;
    const groups: [string, string, unknown, string][] = [
      ['GET', '/pats', undefined, 'pats:manage'],
      ['POST', '/queries', { sql: 'select 1' }, 'query:read'],
      ['GET', '/queries/qr_x', undefined, 'query:read'],
      ['GET', '/catalog', undefined, "'data:read' or 'query:read'"],
      ['GET', '/catalog/demo/orders', undefined, "'data:read' or 'query:read'"],
      ['GET', '/jobs', undefined, 'jobs:read'],
      ['GET', '/jobs/qr_x/events', undefined, 'jobs:read'],
      ['GET', '/jobs/qr_x/result', undefined, 'jobs:read'],
      ['POST', '/jobs/qr_x/cancel', undefined, 'jobs:manage'],
      ['GET', '/connectors', undefined, 'data:read'],
      ['GET', '/sources', undefined, 'data:read'],
      ['GET', '/sources/src_x/sync/stream', undefined, 'data:read'],
      ['POST', '/sources', { connector: 'sample' }, 'apps:manage'],
      ['PATCH', '/sources/src_x', { paused: true }, 'apps:manage'],
      ['DELETE', '/sources/src_x', undefined, 'apps:manage'],
      ['POST', '/sources/src_x/test', undefined, 'apps:manage'],
      ['POST', '/sources/src_x/sync', {}, 'apps:manage'],
      ['GET', '/service-keys', undefined, 'keys:manage'],
      ['POST', '/team-keys', { name: 'x' }, 'keys:manage'],
      ['GET', '/canvases', undefined, 'canvases:read'],
      ['POST', '/canvases', { name: 'x' }, 'canvases:manage'],
    ];
    for (const [method, path, body, scope] of groups) {
      const error = await expectError(await send(method, path, body, {}, bare), 403, 'missing_scope');
      expect(error.message, `${method} ${path}`).toContain(scope.includes("'") ? scope : `'${scope}'`);
    }
    expect((await send('GET', '/whoami', undefined, {}, bare)).status).toBe(200);
  });

  it('idempotent replays are scoped to the principal: the same key from someone else is a new request', async () => {
    const other = await patFor('member', ['query:read', 'apps:manage', 'data:read']);
    const mine = (await (await submit(api, 'select 1', { key: 'shared-key' })).json()) as Json;
    const theirs = await submit(api, 'select 1', { key: 'shared-key', token: other });
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(((await theirs.json()) as Json).id).not.toBe(mine.id);
    const replay = await submit(api, 'select 1', { key: 'shared-key' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');

    const source = (await (
      await send('POST', '/sources', { connector: 'sample', name: `Replay ${transport.name}` })
    ).json()) as Json;
    const first = (await (
      await send('POST', `/sources/${source.id}/sync`, {}, { 'Idempotency-Key': 'sync-shared' })
    ).json()) as Json;
    const second = await send('POST', `/sources/${source.id}/sync`, {}, { 'Idempotency-Key': 'sync-shared' }, other);
    // Another principal's same key is a new request: here it meets the live sync instead of replaying it.
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    if (second.status === 202) expect(((await second.json()) as Json).id).not.toBe(first.id);
    else await expectError(second, 409, 'sync_in_progress');
  });

  describe('POST /data/table with x-api-key', () => {
    let teamKey: string;
    let canvas: Json;
    beforeAll(async () => {
      teamKey = ((await (await send('POST', '/team-keys', { name: 'old integration' })).json()) as Json).secret;
      const created = await send('POST', '/canvases', {
        name: 'Sales board',
        elements: [
          {
            name: 'Top orders',
            sql: 'select order_id, total from lake.demo.orders order by total desc, order_id limit 3',
          },
          { name: 'Customers', table: 'demo.customers' },
        ],
      });
      expect(created.status).toBe(201);
      canvas = (await created.json()) as Json;
    });
    const download = (body: unknown, headers: Record<string, string> = { 'x-api-key': teamKey }) =>
      api.request('/data/table', {
        method: 'POST',
        body: typeof body === 'string' ? body : JSON.stringify(body),
        headers: { 'Content-Type': 'application/json', ...headers },
        token: null,
      });

    it("returns the element's table: a saved query, or a lake table", async () => {
      const top = await download({ canvasId: canvas.id, elementId: canvas.elements[0].id });
      expect(top.status).toBe(200);
      const body = (await top.json()) as Json;
      expect(body).toMatchObject({
        object: 'table_data',
        canvas_id: canvas.id,
        element_id: canvas.elements[0].id,
        name: 'Top orders',
        row_count: 3,
        returned: 3,
        truncated: false,
      });
      expect(body.columns).toEqual([
        { name: 'order_id', type: 'BIGINT' },
        { name: 'total', type: 'DECIMAL(12,2)' },
      ]);
      expect(body.rows).toHaveLength(3);
      expect(body.rows[0]).toEqual({ order_id: expect.any(Number), total: expect.stringMatching(/^\d+\.\d\d$/) });
      const customers = (await (
        await download({ canvasId: canvas.id, elementId: canvas.elements[1].id })
      ).json()) as Json;
      expect(customers).toMatchObject({ row_count: 500, returned: 500 });
      expect(Object.keys(customers.rows[0])).toEqual(['customer_id', 'name', 'email', 'country', 'signed_up']);
    });

    it('a table with rows too large for JSON is a 422 that says to download the result, never a 500', async () => {
      const board = (await (
        await send('POST', '/canvases', {
          name: 'Huge board',
          elements: [{ name: 'Huge', sql: "select repeat('x', 20000000) as s from range(2)" }],
        })
      ).json()) as Json;
      const huge = await download({ canvasId: board.id, elementId: board.elements[0].id });
      const body = (await huge.json()) as Json;
      expect(huge.status, JSON.stringify(body)).toBe(422);
      expect(body.error).toMatchObject({ code: 'inline_row_too_large', message: expect.stringMatching(/Parquet/) });
    });

    it('reads every canvas table of the team even when table permissions restrict people', async () => {
      await api.services.permissions.setEnabled(org, true);
      try {
        expect((await download({ canvasId: canvas.id, elementId: canvas.elements[1].id })).status).toBe(200);
      } finally {
        await api.services.permissions.setEnabled(org, false);
      }
    });

    it('401 for a missing, wrong, non-team or revoked key; 404 for unknown canvases and elements; 400 for bad bodies', async () => {
      const ids = { canvasId: canvas.id, elementId: canvas.elements[0].id };
      await expectError(await download(ids, {}), 401, 'authentication_required');
      await expectError(await download(ids, { 'x-api-key': `tak_${'X'.repeat(40)}` }), 401, 'invalid_credentials');
      await expectError(await download(ids, { 'x-api-key': api.home.ownerToken }), 401, 'invalid_credentials');
      await expectError(
        await api.request('/data/table', {
          method: 'POST',
          body: JSON.stringify(ids),
          headers: { 'Content-Type': 'application/json' },
        }),
        401,
        'invalid_credentials',
      );
      await expectError(
        await download({ canvasId: 'cnv_nope', elementId: canvas.elements[0].id }),
        404,
        'canvas_not_found',
      );
      await expectError(await download({ canvasId: canvas.id, elementId: 'el_nope' }), 404, 'element_not_found');
      await expectError(await download('{"canvasId": '), 400, 'invalid_json');
      await expectError(await download({ canvasId: canvas.id }), 400, 'parameter_missing', 'elementId');
      await expectError(await download({ canvasId: 7, elementId: 'x' }), 400, 'parameter_invalid', 'canvasId');
      await expectError(
        await api.request('/data/table', {
          method: 'POST',
          body: JSON.stringify(ids),
          headers: { 'Content-Type': 'text/plain', 'x-api-key': teamKey },
          token: null,
        }),
        400,
        'invalid_content_type',
      );

      const rival = await api.home.directory.createOrganization('Rival');
      const rivalKey = (
        await api.home.credentials.issue({
          kind: 'team_key',
          organizationId: rival.id,
          userId: null,
          name: 'r',
          scopes: [],
        })
      ).secret;
      await expectError(await download(ids, { 'x-api-key': rivalKey }), 404, 'canvas_not_found');

      const doomed = (await (await send('POST', '/team-keys', { name: 'doomed' })).json()) as Json;
      await send('POST', `/team-keys/${doomed.id}/revoke`);
      await expectError(await download(ids, { 'x-api-key': doomed.secret }), 401, 'credentials_revoked');
    });

    it('canvases are listed and inspected; elements take sql or a table, checked', async () => {
      expect(((await (await send('GET', '/canvases')).json()) as Json).data.map((c: Json) => c.id)).toContain(
        canvas.id,
      );
      expect(((await (await send('GET', `/canvases/${canvas.id}`)).json()) as Json).elements).toHaveLength(2);
      const added = await send('POST', `/canvases/${canvas.id}/elements`, { name: 'Items', table: 'demo.order_items' });
      expect(added.status).toBe(201);
      await expectError(
        await send('POST', `/canvases/${canvas.id}/elements`, { name: 'Bad', sql: 'drop table x' }),
        400,
        'write_not_allowed',
      );
      await expectError(
        await send('POST', `/canvases/${canvas.id}/elements`, { name: 'Both', sql: 'select 1', table: 'a.b' }),
        400,
        'parameter_invalid',
      );
      await expectError(await send('GET', '/canvases/cnv_nope'), 404, 'canvas_not_found');
    });
  });
});
