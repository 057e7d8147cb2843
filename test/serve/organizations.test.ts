import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/contract/routes.js';
import { runLake } from '../helpers/cli.js';
import { createMetadataDatabase } from '../helpers/postgres.js';
import { startReplicaSet, type ReplicaSet } from '../helpers/replicas.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

type Json = Record<string, any>;

/** One HTTP call as a given credential: the status and the parsed body. */
async function call(
  base: string,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? (JSON.parse(text) as Json) : { text } };
}

async function ended(base: string, token: string, id: string): Promise<Json> {
  for (let i = 0; i < 600; i++) {
    const job = (await call(base, token, 'GET', `/jobs/${id}`)).body;
    if (job.status !== 'queued' && job.status !== 'running') return job;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${id} never ended`);
}

async function query(base: string, token: string, sql: string): Promise<{ status: number; body: Json }> {
  const submitted = await call(base, token, 'POST', '/queries', { sql });
  if (submitted.status >= 300) return submitted;
  for (;;) {
    const polled = await call(base, token, 'GET', `/queries/${submitted.body.id}?wait=30&format=inline`);
    if (polled.body.status !== 'running' && polled.body.status !== 'queued') return polled;
  }
}

/**
 * What an operator does for a second team, over HTTP only: the organization with its owner and the owner's
 * token; the owner syncs a source, adds a member with a token and a grant of one table; the member reads that
 * table and is refused the other. `a` and `b` may be two replicas: each step alternates between them.
 */
async function onboardSecondTeam(a: string, b: string, operatorToken: string, firstOwnerToken: string) {
  const created = await call(a, operatorToken, 'POST', '/organizations', {
    name: 'Second team',
    owner: { name: 'Ann', email: 'ann@example.com' },
  });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ object: 'organization', name: 'Second team', deactivated: null });
  const org = created.body.id as string;
  const ownerToken = created.body.owner.token.secret as string;
  expect(ownerToken).toMatch(/^pat_/);
  expect(created.body.owner.user).toMatchObject({ object: 'user', role: 'owner', organization: org, name: 'Ann' });

  // The operator sees and renames organizations on either replica, and is in none of them.
  expect((await call(b, operatorToken, 'GET', `/organizations/${org}`)).body.name).toBe('Second team');
  expect((await call(b, operatorToken, 'PATCH', `/organizations/${org}`, { name: 'Team two' })).body.name).toBe(
    'Team two',
  );
  const listed = await call(a, operatorToken, 'GET', '/organizations?limit=100');
  expect(listed.body.data.map((o: Json) => o.id)).toContain(org);
  expect((await call(a, operatorToken, 'GET', '/jobs')).body.error.code).toBe('invalid_credentials');
  expect((await call(a, ownerToken, 'GET', '/organizations')).body.error.code).toBe('operator_required');
  expect((await call(a, firstOwnerToken, 'POST', '/organizations', { name: 'x' })).status).toBe(403);

  const whoami = (await call(b, ownerToken, 'GET', '/whoami')).body;
  expect(whoami.organization).toEqual({ id: org, name: 'Team two' });
  expect(whoami.user.role).toBe('owner');

  const source = (await call(b, ownerToken, 'POST', '/sources', { connector: 'sample', name: 'Billing' })).body;
  const sync = (await call(a, ownerToken, 'POST', `/sources/${source.id}/sync`, {})).body;
  expect((await ended(b, ownerToken, sync.id)).status).toBe('succeeded');
  const schema = (source.destination_schema ?? source.lake_schema) as string;

  const bob = await call(a, ownerToken, 'POST', '/users', { name: 'Bob', email: 'bob@example.com' });
  expect(bob.status).toBe(201);
  expect(bob.body).toMatchObject({ role: 'member', organization: org, deactivated: null });
  const bobToken = await call(b, ownerToken, 'POST', `/users/${bob.body.id}/pats`, {
    name: 'Bob laptop',
    scopes: ['query:read', 'data:read'],
  });
  expect(bobToken.status).toBe(201);
  const memberToken = bobToken.body.secret as string;
  expect((await call(a, ownerToken, 'GET', '/users')).body.data.map((u: Json) => u.name).sort()).toEqual([
    'Ann',
    'Bob',
  ]);

  expect((await call(b, ownerToken, 'POST', '/table_permissions', { enabled: true })).body.enabled).toBe(true);
  const grant = await call(a, ownerToken, 'POST', '/grants', {
    schema,
    table: 'invoices',
    grantee_kind: 'user',
    grantee: bob.body.id,
  });
  expect(grant.status).toBe(201);
  expect((await call(b, ownerToken, 'GET', '/grants')).body.data).toHaveLength(1);

  const granted = await query(b, memberToken, `select count(*) as n from lake.${schema}.invoices`);
  expect(granted.body).toMatchObject({ status: 'succeeded' });
  expect(Number(granted.body.data[0].n)).toBeGreaterThan(0);
  const refused = await query(a, memberToken, `select count(*) from lake.${schema}.accounts`);
  expect(refused.body.error?.code).toBe('grant_table_denied');

  // A second token of Bob's, listed by the owner without its secret, and revoked at once on the other replica.
  const spare = await call(a, ownerToken, 'POST', `/users/${bob.body.id}/pats`, {
    name: 'spare',
    scopes: ['query:read'],
  });
  const tokens = await call(b, ownerToken, 'GET', `/users/${bob.body.id}/pats`);
  expect(tokens.body.data.map((t: Json) => t.name).sort()).toEqual(['Bob laptop', 'spare']);
  expect(JSON.stringify(tokens.body)).not.toContain(spare.body.secret);
  expect((await call(b, ownerToken, 'POST', `/users/${bob.body.id}/pats/${spare.body.id}/revoke`)).status).toBe(200);
  expect((await call(a, spare.body.secret, 'GET', '/whoami')).body.error.code).toBe('credentials_revoked');
  expect((await call(a, memberToken, 'GET', '/whoami')).status).toBe(200);
  const notHis = await call(a, ownerToken, 'POST', `/users/${bob.body.id}/pats/${created.body.owner.token.id}/revoke`);
  expect(notHis.status).toBe(404);

  // Bob deactivated: his token is refused at once on the other replica; the last owner cannot go; Bob comes back.
  const off = await call(a, ownerToken, 'POST', `/users/${bob.body.id}/deactivate`);
  expect(off.body.deactivated).toEqual(expect.any(Number));
  const refusedBob = await call(b, memberToken, 'GET', '/whoami');
  expect([refusedBob.status, refusedBob.body.error.code]).toEqual([401, 'user_deactivated']);
  const lastOwner = await call(b, ownerToken, 'POST', `/users/${created.body.owner.user.id}/deactivate`);
  expect([lastOwner.status, lastOwner.body.error.code]).toEqual([409, 'last_owner']);
  expect((await call(b, ownerToken, 'GET', `/users/${bob.body.id}`)).body.deactivated).not.toBeNull();
  expect((await call(a, ownerToken, 'POST', `/users/${bob.body.id}/reactivate`)).body.deactivated).toBeNull();
  expect((await call(b, memberToken, 'GET', '/whoami')).status).toBe(200);
  // Another organization's person is not found, whatever its id.
  const firstOwnerId = (await call(b, firstOwnerToken, 'GET', '/whoami')).body.user.id as string;
  const foreignUser = await call(a, ownerToken, 'GET', `/users/${firstOwnerId}`);
  expect([foreignUser.status, foreignUser.body.error.code]).toEqual([404, 'user_not_found']);
  // A grant never names another organization's person, and the first organization cannot see this one's tables.
  const foreign = await call(a, ownerToken, 'POST', '/grants', {
    schema,
    table: '*',
    grantee_kind: 'user',
    grantee: 'usr_nobody',
  });
  expect(foreign.body.error.code).toBe('parameter_invalid');
  expect((await call(b, firstOwnerToken, 'GET', `/catalog/${schema}`)).body.error.code).toBe('catalog_not_found');

  return { org, ownerToken, memberToken, schema, secrets: [ownerToken, memberToken, operatorToken] };
}

/** Every organization route, called with a deactivated organization's owner token: each refuses at once. */
async function expectEveryRouteRefused(base: string, token: string): Promise<void> {
  const refusals: string[] = [];
  for (const route of ROUTES) {
    if (route.auth.public || route.auth.operator === 'only' || route.auth.teamKey === 'only') continue;
    const path = route.path.replace(/\{(\w+)\}/g, 'x_1');
    const answer = await call(base, token, route.method.toUpperCase(), path, route.body ? {} : undefined);
    if (answer.status !== 401 || answer.body.error?.code !== 'organization_deactivated')
      refusals.push(`${route.method} ${route.path}: ${answer.status} ${answer.body.error?.code}`);
  }
  expect(refusals).toEqual([]);
}

async function deactivateAndReactivate(
  a: string,
  b: string,
  operatorToken: string,
  team: Awaited<ReturnType<typeof onboardSecondTeam>>,
): Promise<void> {
  const teamKey = await call(a, team.ownerToken, 'POST', '/team-keys', { name: 'legacy' });
  const countSql = `select count(*) as n from lake.${team.schema}.invoices`;
  const before = await query(a, team.memberToken, countSql);

  const deactivated = await call(b, operatorToken, 'POST', `/organizations/${team.org}/deactivate`);
  expect(deactivated.status).toBe(200);
  expect(deactivated.body.deactivated).toEqual(expect.any(Number));
  // At once, on the other replica too: no cache stands between deactivation and the next request.
  for (const base of [a, b]) {
    const answer = await call(base, team.memberToken, 'GET', '/whoami');
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe('organization_deactivated');
  }
  await expectEveryRouteRefused(a, team.ownerToken);
  const legacy = await call(
    b,
    undefined,
    'POST',
    '/data/table',
    { canvas_id: 'x', table: 'y' },
    {
      'x-api-key': teamKey.body.secret,
    },
  );
  expect(legacy.body.error.code).toBe('organization_deactivated');

  // Its data is kept: reactivated, the same question gets the same answer.
  expect((await call(a, operatorToken, 'POST', `/organizations/${team.org}/reactivate`)).body.deactivated).toBeNull();
  const after = await query(b, team.memberToken, countSql);
  expect(after.body.data).toEqual(before.body.data);
}

async function expectAudited(base: string, operatorToken: string, team: Awaited<ReturnType<typeof onboardSecondTeam>>) {
  const owners = await call(base, team.ownerToken, 'GET', '/audit_events?limit=200');
  expect(owners.status).toBe(200);
  const actions = owners.body.data.map((e: Json) => e.action);
  for (const action of [
    'organization.created',
    'organization.renamed',
    'organization.deactivated',
    'organization.reactivated',
    'user.created',
    'pat.created',
    'permissions.enabled',
    'grant.created',
    'team_key.created',
    'source.created',
  ])
    expect(actions).toContain(action);
  const created = owners.body.data.find((e: Json) => e.action === 'organization.created');
  expect(created.actor).toMatchObject({ kind: 'operator', user: null, request_id: expect.stringMatching(/^req_/) });
  expect(created.organization).toBe(team.org);
  // The operator reads the same organization's log; an owner cannot read another organization's.
  const operators = await call(base, operatorToken, 'GET', `/audit_events?organization=${team.org}&limit=200`);
  expect(operators.body.data.map((e: Json) => e.id)).toEqual(owners.body.data.map((e: Json) => e.id));
  expect((await call(base, team.ownerToken, 'GET', '/audit_events?organization=org_other')).status).toBe(400);
  const everything = JSON.stringify([owners.body, operators.body]);
  for (const secret of team.secrets) expect(everything).not.toContain(secret);
  expect(everything).not.toMatch(/(pat|nsk|tak|opr)_[0-9A-Za-z]{40}/);
}

describe('an operator onboards a second organization over HTTP', () => {
  describe('one lake serve on SQLite metadata', () => {
    let server: ServeProcess;
    let printed: Json;
    beforeAll(async () => {
      const home = join(tempDir('lake-orgs'), 'home');
      const init = await runLake(['init', '--json'], { env: { LAKE_HOME: home } });
      expect(init.code).toBe(0);
      printed = JSON.parse(init.stdout) as Json;
      server = await startServeProcess({ LAKE_HOME: home, LAKE_QUERY_WORKERS: '2', LAKE_QUERY_THREADS: '1' });
    }, 60_000);
    afterAll(async () => {
      await server?.stop();
    });

    it('prints an operator token once that belongs to no organization', () => {
      expect(printed.operator_token.secret).toMatch(/^opr_[0-9A-Za-z]{40}$/);
      expect(printed.operator_token.id).toMatch(/^opt_/);
    });

    it('creates the organization, its owner, a member with a restricted grant; deactivation refuses every route', async () => {
      const operatorToken = printed.operator_token.secret as string;
      const team = await onboardSecondTeam(server.url, server.url, operatorToken, printed.token.secret);
      await deactivateAndReactivate(server.url, server.url, operatorToken, team);
      await expectAudited(server.url, operatorToken, team);
    }, 120_000);
  });

  describe('two lake serve replicas on one PostgreSQL store', () => {
    let store: { url: string; drop(): Promise<void> };
    let set: ReplicaSet;
    beforeAll(async () => {
      store = await createMetadataDatabase();
      set = await startReplicaSet(store.url, 2);
    }, 120_000);
    afterAll(async () => {
      await set?.stop();
      await store?.drop();
    });

    it('does the same with every step alternating between the replicas', async () => {
      const [a, b] = set.replicas.map((r) => r.url) as [string, string];
      const team = await onboardSecondTeam(a, b, set.operatorToken, set.token);
      await deactivateAndReactivate(a, b, set.operatorToken, team);
      await expectAudited(b, set.operatorToken, team);
    }, 180_000);
  });
});
