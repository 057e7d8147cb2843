import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/service/auth/scopes.js';
import { inMemory, type Harness } from '../helpers/transports.js';
import type { Json } from '../helpers/queries.js';

type Role = 'owner' | 'admin' | 'member' | 'service key';
const ROLES: Role[] = ['owner', 'admin', 'member', 'service key'];

/**
 * Walks docs/api.md's "Authorization model" table: every role (with every scope, so only the model decides) tries
 * every action on resources another principal made, and on its own. The expected status per role is the table's.
 */
describe('the authorization model, role by action', () => {
  let api: Harness;
  const tokens = {} as Record<Role, string>;
  // A sink nothing listens on: sends are made, never delivered here.
  const hook = { type: 'webhook', url: 'http://127.0.0.1:9/hook' };

  beforeAll(async () => {
    api = await inMemory.start();
    const org = api.home.organization.id;
    tokens.owner = api.home.ownerToken;
    for (const role of ['admin', 'member'] as const) {
      const user = await api.home.directory.createUser(org, role, role);
      tokens[role] = (
        await api.home.credentials.issue({
          kind: 'pat',
          organizationId: org,
          userId: user.id,
          name: role,
          scopes: [...SCOPES],
        })
      ).secret;
    }
    tokens['service key'] = (
      await api.home.credentials.issue({
        kind: 'service_key',
        organizationId: org,
        userId: null,
        name: 'k',
        scopes: [...SCOPES],
      })
    ).secret;
  });
  afterAll(async () => {
    await api?.close();
  });

  const call = async (role: Role, method: string, path: string, body?: object): Promise<number> => {
    const response = await api.request(path, {
      method,
      token: tokens[role],
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    });
    await response.arrayBuffer();
    return response.status;
  };
  const make = async (role: Role, path: string, body: object): Promise<Json> => {
    const response = await api.request(path, {
      method: 'POST',
      token: tokens[role],
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' },
    });
    const json = (await response.json()) as Json;
    expect(response.status, JSON.stringify(json)).toBe(201);
    return json;
  };
  let n = 0;
  const unique = (what: string): string => `${what} ${++n}`;

  it('sources: anyone with apps:manage changes any source of the organization', async () => {
    for (const actor of ROLES) {
      const source = await make('owner', '/sources', { connector: 'sample', name: unique('src') });
      expect(await call(actor, 'GET', `/sources/${source.id}`)).toBe(200);
      expect(await call(actor, 'PATCH', `/sources/${source.id}`, { name: unique('renamed') })).toBe(200);
      expect(await call(actor, 'POST', `/sources/${source.id}/test`, {})).toBe(200);
      expect(await call(actor, 'DELETE', `/sources/${source.id}`)).toBe(200);
    }
  });

  it('sends: everyone reads them; only the creator or an owner changes, runs or deletes one', async () => {
    for (const creator of ROLES) {
      for (const actor of ROLES) {
        const send = await make(creator, '/sends', {
          name: unique('send'),
          sql: 'select 1 as x',
          destination: hook,
          paused: true,
        });
        const allowed = actor === creator || actor === 'owner';
        const expected = allowed ? 200 : 403;
        expect(await call(actor, 'GET', `/sends/${send.id}`), `${actor} reads ${creator}'s send`).toBe(200);
        expect(
          await call(actor, 'PATCH', `/sends/${send.id}`, { name: unique('n') }),
          `${actor} renames ${creator}'s send`,
        ).toBe(expected);
        expect(
          await call(actor, 'PATCH', `/sends/${send.id}`, { sql: 'select 2 as x' }),
          `${actor} rewrites ${creator}'s send`,
        ).toBe(expected);
        // Paused: a permitted run is refused for that reason (409), a forbidden one before it (403).
        expect(await call(actor, 'POST', `/sends/${send.id}/run`, {}), `${actor} runs ${creator}'s send`).toBe(
          allowed ? 409 : 403,
        );
        expect(await call(actor, 'DELETE', `/sends/${send.id}`), `${actor} deletes ${creator}'s send`).toBe(expected);
      }
    }
  });

  it('canvases: everyone reads them; only the creator or an owner adds to one', async () => {
    for (const creator of ROLES) {
      for (const actor of ROLES) {
        const canvas = await make(creator, '/canvases', { name: unique('canvas') });
        expect(await call(actor, 'GET', `/canvases/${canvas.id}`)).toBe(200);
        expect(
          await call(actor, 'POST', `/canvases/${canvas.id}/elements`, { name: 'e', sql: 'select 1' }),
          `${actor} adds to ${creator}'s canvas`,
        ).toBe(actor === creator || actor === 'owner' ? 201 : 403);
      }
    }
  });

  it('organization keys: owners and admins make service keys, only owners team keys', async () => {
    const expected: Record<Role, [number, number]> = {
      owner: [201, 201],
      admin: [201, 403],
      member: [403, 403],
      'service key': [403, 403],
    };
    for (const actor of ROLES) {
      expect(
        await call(actor, 'POST', '/service-keys', { name: unique('k'), scopes: ['query:read'] }),
        `${actor} makes a service key`,
      ).toBe(expected[actor][0]);
      expect(await call(actor, 'POST', '/team-keys', { name: unique('t') }), `${actor} makes a team key`).toBe(
        expected[actor][1],
      );
    }
  });
});
