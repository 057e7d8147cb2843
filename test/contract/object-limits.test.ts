import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_OBJECT_LIMITS,
  objectLimitsFromEnv,
  type ObjectLimits,
} from '../../src/service/limits/object-limits.js';
import { expectError, type Json } from '../helpers/queries.js';
import { newMember } from '../helpers/members.js';
import { overHttp, type Harness } from '../helpers/transports.js';

/**
 * What one tenant may keep of each kind of object it creates: every one is a row its listings, the scheduler's
 * rounds and its checks read in the store all organizations share. One more past a ceiling is refused with 409
 * `object_limit_reached`, saying what makes room; making room lets the next one in; several requests racing for the
 * last place get exactly one.
 */
describe('object limits', () => {
  let api: Harness;
  const limits: ObjectLimits = { sources: 3, sends: 2, canvases: 2, users: 4, keys: 2, grants: 3, tokens: 2 };
  beforeAll(async () => {
    api = await overHttp.start({ services: { objectLimits: limits } });
  });
  afterAll(async () => {
    await api.close();
  });

  const call = (method: string, path: string, body?: unknown, token?: string) =>
    api.request(path, {
      method,
      token,
      ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    });
  const created = async (response: Response): Promise<Json> => {
    const body = (await response.json()) as Json;
    expect(response.status, JSON.stringify(body)).toBe(201);
    return body;
  };
  /** Fires `n` creations at once: exactly one may take the last place. */
  const race = async (n: number, make: (i: number) => Promise<Response>): Promise<number[]> =>
    (await Promise.all(Array.from({ length: n }, (_, i) => make(i)))).map((r) => r.status).sort();
  const refused = async (response: Response, variable: string, remedy: RegExp): Promise<void> => {
    const error = await expectError(response, 409, 'object_limit_reached');
    expect(error.message).toContain(variable);
    expect(error.message).toMatch(remedy);
  };

  it('keeps at most LAKE_ORG_MAX_SOURCES sources; a deleted one makes room, and a race takes the last place once', async () => {
    const make = (i: number) => call('POST', '/sources', { connector: 'sample', name: `limited ${i}` });
    const first = await created(await make(1));
    await created(await make(2));
    expect(await race(4, (i) => make(10 + i))).toEqual([201, 409, 409, 409]);
    await refused(await make(3), 'LAKE_ORG_MAX_SOURCES', /3 sources.*Delete a source/);
    // Unnamed, it is refused the same way (its default name is found first).
    await refused(await call('POST', '/sources', { connector: 'sample' }), 'LAKE_ORG_MAX_SOURCES', /Delete/);
    expect((await call('DELETE', `/sources/${first.id}`)).status).toBe(200);
    await created(await make(4));
  });

  it('names one object in the singular', async () => {
    const single = await overHttp.start({ services: { objectLimits: { ...limits, keys: 1 } } });
    try {
      const make = () =>
        single.request('/service-keys', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'etl', scopes: ['query:read'] }),
        });
      await created(await make());
      const error = await expectError(await make(), 409, 'object_limit_reached');
      expect(error.message).toMatch(
        /^Your organization already has 1 active service or team key, the most this server allows \(1, LAKE_ORG_MAX_KEYS\)\. Revoke a key/,
      );
    } finally {
      await single.close();
    }
  });

  it('keeps at most LAKE_ORG_MAX_SENDS sends', async () => {
    const make = (i: number) =>
      call('POST', '/sends', {
        name: `send ${i}`,
        sql: 'select 1 as n',
        destination: { type: 'webhook', url: 'http://127.0.0.1:9/hook' },
      });
    const first = await created(await make(1));
    expect(await race(3, (i) => make(10 + i))).toEqual([201, 409, 409]);
    await refused(await make(2), 'LAKE_ORG_MAX_SENDS', /Delete a send/);
    expect((await call('DELETE', `/sends/${first.id}`)).status).toBe(200);
    await created(await make(3));
  });

  it('keeps at most LAKE_ORG_MAX_CANVASES canvases; DELETE /canvases/{id} (its creator or an owner) makes room', async () => {
    const member = await newMember(api, ['canvases:read', 'canvases:manage', 'query:read']);
    const mine = await created(await call('POST', '/canvases', { name: 'owner board' }));
    const theirs = await created(await call('POST', '/canvases', { name: 'member board' }, member.token));
    await refused(await call('POST', '/canvases', { name: 'one more' }), 'LAKE_ORG_MAX_CANVASES', /Delete a canvas/);
    // Only its creator or an owner deletes a canvas.
    await expectError(await call('DELETE', `/canvases/${mine.id}`, undefined, member.token), 403, 'creator_required');
    const deleted = await call('DELETE', `/canvases/${theirs.id}`);
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ object: 'canvas_deletion', id: theirs.id, deleted: true });
    await expectError(await call('GET', `/canvases/${theirs.id}`), 404, 'canvas_not_found');
    await expectError(await call('DELETE', `/canvases/${theirs.id}`), 404, 'canvas_not_found');
    expect(await race(3, (i) => call('POST', '/canvases', { name: `raced ${i}` }))).toEqual([201, 409, 409]);
  });

  it('keeps at most LAKE_ORG_MAX_USERS active people; deactivating makes room and reactivating counts again', async () => {
    // The harness's home has its owner; the canvases test added a member.
    const active = async (): Promise<number> => {
      const page = (await (await call('GET', '/users?limit=100')).json()) as Json;
      return (page.data as Json[]).filter((u) => u.deactivated === null).length;
    };
    const make = (i: number) => call('POST', '/users', { name: `Person ${i}` });
    while ((await active()) < limits.users - 1) await created(await make(0));
    expect(await race(3, (i) => make(10 + i))).toEqual([201, 409, 409]);
    await refused(await make(1), 'LAKE_ORG_MAX_USERS', /Deactivate someone/);
    const page = (await (await call('GET', '/users?limit=100')).json()) as Json;
    const member = (page.data as Json[]).find((u) => u.role === 'member' && u.deactivated === null) as Json;
    expect((await call('POST', `/users/${member.id}/deactivate`)).status).toBe(200);
    const newcomer = await created(await make(3));
    await refused(await call('POST', `/users/${member.id}/reactivate`), 'LAKE_ORG_MAX_USERS', /Deactivate/);
    expect((await call('POST', `/users/${newcomer.id}/deactivate`)).status).toBe(200);
    expect((await call('POST', `/users/${member.id}/reactivate`)).status).toBe(200);
  });

  it('holds at most LAKE_ORG_MAX_KEYS active keys; a revoked one makes room', async () => {
    const make = (i: number) => call('POST', '/service-keys', { name: `etl ${i}`, scopes: ['query:read'] });
    const first = await created(await make(1));
    expect(await race(3, (i) => make(10 + i))).toEqual([201, 409, 409]);
    await refused(await make(2), 'LAKE_ORG_MAX_KEYS', /Revoke a key/);
    expect((await call('POST', `/service-keys/${first.id}/revoke`)).status).toBe(200);
    await created(await make(3));
  });

  it('keeps at most LAKE_ORG_MAX_GRANTS grants; one already held is answered again, a revoked one makes room', async () => {
    const grant = (table: string) =>
      call('POST', '/grants', { schema: 'demo', table, grantee_kind: 'role', grantee: 'member' });
    const first = await created(await grant('orders'));
    await created(await grant('customers'));
    expect(await race(3, (i) => grant(`t${i}`))).toEqual([201, 409, 409]);
    await refused(await grant('another'), 'LAKE_ORG_MAX_GRANTS', /Revoke grants/);
    const again = await grant('orders');
    expect(again.status).toBeLessThan(300);
    expect(((await again.json()) as Json).id).toBe(first.id);
    expect((await call('POST', `/grants/${first.id}/revoke`)).status).toBe(200);
    await created(await grant('another'));
  });

  it('lets each person hold at most LAKE_USER_MAX_TOKENS active tokens, counted per person', async () => {
    const member = await newMember(api, ['query:read', 'pats:manage']); // holds one token already
    const make = (token: string | undefined, i: number) =>
      call('POST', '/pats', { name: `t${i}`, scopes: ['query:read'] }, token);
    expect(await race(3, (i) => make(member.token, i))).toEqual([201, 409, 409]);
    const error = await expectError(await make(member.token, 9), 409, 'object_limit_reached');
    expect(error.message).toMatch(/^You already have 2 active personal access tokens.*LAKE_USER_MAX_TOKENS/);
    // Another person's tokens are theirs: the owner still makes one.
    await created(await make(undefined, 1));
    expect((await call('POST', `/pats/${member.credentialId}/revoke`, undefined, member.token)).status).toBe(200);
  });

  it('has defaults a team does not meet and an operator can raise', () => {
    expect(objectLimitsFromEnv({ LAKE_ORG_MAX_SOURCES: '5000', LAKE_USER_MAX_TOKENS: '7' })).toMatchObject({
      sources: 5_000,
      tokens: 7,
      sends: 1_000,
    });
    for (const bad of ['0', '-1', '2.5', 'many', '1000001'])
      expect(() => objectLimitsFromEnv({ LAKE_ORG_MAX_SENDS: bad })).toThrow(
        /^LAKE_ORG_MAX_SENDS must be a whole number from 1 to 1000000/,
      );
    expect(DEFAULT_OBJECT_LIMITS).toEqual({
      sources: 1_000,
      sends: 1_000,
      canvases: 1_000,
      users: 10_000,
      keys: 500,
      grants: 10_000,
      tokens: 100,
    });
  });
});
