import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

type Json = Record<string, any>;

describe('lake admin org and people, over the API and on the home', () => {
  let home: string;
  let server: ServeProcess;
  let operatorToken: string;
  let ownerToken: string;
  beforeAll(async () => {
    home = join(tempDir('lake-admin-org'), 'home');
    const init = await runLake(['init', '--json'], { env: { LAKE_HOME: home } });
    const printed = JSON.parse(init.stdout) as Json;
    operatorToken = printed.operator_token.secret;
    ownerToken = printed.token.secret;
    server = await startServeProcess({ LAKE_HOME: home });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  /** `lake` over the API with a token, from a machine that has no home of the server's. */
  const remote = (token: string, args: string[]) =>
    runLake(['--base-url', server.url, ...args], { env: { LAKE_TOKEN: token } });

  it('creates, lists, renames, deactivates and reactivates organizations with the operator token', async () => {
    const created = await remote(operatorToken, [
      'admin',
      'org',
      'create',
      'Second team',
      '--owner-name',
      'Ann',
      '--owner-email',
      'ann@example.com',
      '--json',
    ]);
    expect(created.code).toBe(0);
    const org = JSON.parse(created.stdout) as Json;
    expect(org).toMatchObject({ object: 'organization', name: 'Second team', deactivated: null });
    const annToken = org.owner.token.secret as string;

    const listed = await remote(operatorToken, ['admin', 'org', 'ls']);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n')[0]).toBe('id,name,state,permissions,created');
    expect(listed.stdout).toContain(`${org.id},Second team,active,off,`);

    expect((await remote(operatorToken, ['admin', 'org', 'rename', org.id, 'Team two'])).stdout).toContain(
      'name\tTeam two',
    );

    // The new owner runs the people commands over the API with their own token.
    const bob = await remote(annToken, ['admin', 'user', 'create', '--name', 'Bob', '--json']);
    expect(bob.code).toBe(0);
    const bobId = (JSON.parse(bob.stdout) as Json).id as string;
    const bobToken = await remote(annToken, [
      'admin',
      'pat',
      'create',
      '--user',
      bobId,
      '--scopes',
      'query:read',
      '--json',
    ]);
    expect(bobToken.code).toBe(0);
    expect(JSON.parse(bobToken.stdout)).toMatchObject({ object: 'personal_access_token', scopes: ['query:read'] });
    expect((await remote(annToken, ['admin', 'permissions', 'on'])).code).toBe(0);
    expect((await remote(annToken, ['admin', 'grant', 'billing.*', '--to', 'user:Bob'])).code).toBe(0);
    const grants = await remote(annToken, ['admin', 'grants', 'ls', '--json']);
    expect(JSON.parse(grants.stdout)).toMatchObject({
      table_permissions: true,
      data: [{ schema: 'billing', table: '*', grantee: `user:${bobId}` }],
    });
    const users = await remote(annToken, ['admin', 'user', 'ls']);
    expect(users.stdout).toMatch(/Bob,,member,[^,]+,active/);

    // An owner's token is not the operator's, and the last owner cannot be demoted.
    const refused = await remote(annToken, ['admin', 'org', 'ls']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('operator_required');
    expect(refused.stderr).toMatch(/req_/);
    const annId = org.owner.user.id as string;
    const demoted = await remote(annToken, ['admin', 'user', 'role', annId, 'member']);
    expect(demoted.stderr).toContain('last_owner');

    const off = await remote(operatorToken, ['admin', 'org', 'deactivate', org.id, '--json']);
    expect(JSON.parse(off.stdout).deactivated).toEqual(expect.any(Number));
    const locked = await remote(annToken, ['whoami']);
    expect(locked.code).not.toBe(0);
    expect(locked.stderr).toContain('organization_deactivated');
    expect((await remote(operatorToken, ['admin', 'org', 'reactivate', org.id])).code).toBe(0);
    expect((await remote(annToken, ['whoami'])).code).toBe(0);

    const audit = await remote(operatorToken, ['admin', 'audit', '--org', org.id, '--json']);
    const actions = (JSON.parse(audit.stdout) as Json).data.map((e: Json) => e.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        'organization.created',
        'organization.renamed',
        'organization.deactivated',
        'grant.created',
      ]),
    );
    expect(audit.stdout).not.toContain(annToken);
  }, 60_000);

  it('works on the home directly for bootstrap, recorded as lake admin', async () => {
    const created = await runLake(['admin', 'org', 'create', 'Third team', '--owner-name', 'Cy', '--json'], {
      env: { LAKE_HOME: home },
    });
    expect(created.code).toBe(0);
    const org = JSON.parse(created.stdout) as Json;
    const listed = await runLake(['admin', 'org', 'ls', '--json'], { env: { LAKE_HOME: home } });
    expect((JSON.parse(listed.stdout) as Json).data.map((o: Json) => o.name)).toContain('Third team');
    // Paged as every list command is, on the home as over the API.
    const first = JSON.parse(
      (await runLake(['admin', 'org', 'ls', '--limit', '1', '--json'], { env: { LAKE_HOME: home } })).stdout,
    ) as Json;
    expect(first).toMatchObject({ has_more: true, next_cursor: first.data[0].id });
    const second = await runLake(
      ['admin', 'org', 'ls', '--limit', '1', '--starting-after', first.next_cursor, '--json'],
      {
        env: { LAKE_HOME: home },
      },
    );
    expect((JSON.parse(second.stdout) as Json).data[0].id < first.next_cursor).toBe(true);
    const everyOne = JSON.parse(
      (await runLake(['admin', 'org', 'ls', '--all', '--json'], { env: { LAKE_HOME: home } })).stdout,
    ) as Json;
    expect(everyOne.data.length).toBe((JSON.parse(listed.stdout) as Json).data.length);
    expect((await runLake(['admin', 'org', 'ls', '--limit', '0'], { env: { LAKE_HOME: home } })).code).toBe(2);
    const overApi = await remote(operatorToken, ['admin', 'org', 'ls', '--limit', '1', '--json']);
    expect(JSON.parse(overApi.stdout)).toMatchObject({ has_more: true, next_cursor: first.data[0].id });
    // The owner's token works against the running server at once.
    const whoami = await remote(org.owner.token.secret, ['whoami', '--json']);
    expect(JSON.parse(whoami.stdout).organization).toEqual({ id: org.id, name: 'Third team' });
    const events = await remote(operatorToken, ['admin', 'audit', '--org', org.id, '--json']);
    const created_ = (JSON.parse(events.stdout) as Json).data.find((e: Json) => e.action === 'organization.created');
    expect(created_.actor.kind).toBe('local_admin');
    // And the first organization's owner is untouched by any of it.
    expect((await remote(ownerToken, ['whoami'])).code).toBe(0);
  }, 60_000);

  it('makes, lists and revokes operator tokens on the home; a revoked one fails at once', async () => {
    const made = await runLake(['admin', 'operator-token', 'create', '--name', 'second', '--json'], {
      env: { LAKE_HOME: home },
    });
    const token = JSON.parse(made.stdout) as Json;
    expect(token.secret).toMatch(/^opr_/);
    expect((await remote(token.secret, ['admin', 'org', 'ls'])).code).toBe(0);
    const listed = await runLake(['admin', 'operator-token', 'ls', '--json'], { env: { LAKE_HOME: home } });
    expect(listed.stdout).not.toContain(token.secret);
    expect((JSON.parse(listed.stdout) as Json).data.map((t: Json) => t.name)).toEqual(
      expect.arrayContaining(['lake init', 'second']),
    );
    expect((await runLake(['admin', 'operator-token', 'revoke', token.id], { env: { LAKE_HOME: home } })).code).toBe(0);
    const refused = await remote(token.secret, ['admin', 'org', 'ls']);
    expect(refused.stderr).toContain('credentials_revoked');
    expect((await remote(operatorToken, ['admin', 'org', 'ls'])).code).toBe(0);
    const events = await remote(operatorToken, ['admin', 'audit', '--action', 'operator_token.revoked', '--json']);
    expect((JSON.parse(events.stdout) as Json).data[0]).toMatchObject({
      organization: null,
      target: { type: 'operator_token', id: token.id },
      actor: { kind: 'local_admin' },
    });
  }, 60_000);
});
