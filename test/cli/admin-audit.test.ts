import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { startServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

describe('lake admin audit', () => {
  const root = tempDir('lake-audit');
  const env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
  const lake = (...args: string[]) => runLake(args, { env, timeoutMs: 60_000 });

  it('shows what lake admin and API callers did, as the API objects with --json and rows in a pipe, never a secret', async () => {
    const user = JSON.parse((await lake('admin', 'user', 'create', '--name', 'Ada', '--json')).stdout) as {
      id: string;
    };
    const pat = await lake('admin', 'pat', 'create', '--user', user.id, '--scopes', 'query:read', '--json');
    expect(pat.code, pat.stderr).toBe(0);
    const secret = (JSON.parse(pat.stdout) as { secret: string }).secret;
    const token = await lake('pats', 'create', '--name', 'laptop', '--scopes', 'query:read', '--json');
    expect(token.code, token.stderr).toBe(0);
    const tokenSecret = (JSON.parse(token.stdout) as { secret: string }).secret;

    const listed = await lake('admin', 'audit', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const events = (
      JSON.parse(listed.stdout) as { data: { action: string; actor: { kind: string }; target: { id: string } }[] }
    ).data;
    // First the home's own owner token, made by the first command that opened the home.
    expect(events.map((e) => e.action).reverse()).toEqual([
      'pat.created',
      'user.created',
      'pat.created',
      'pat.created',
    ]);
    expect(events[3]).toMatchObject({ actor: { kind: 'local_admin' }, target: { type: 'pat' } });
    expect(events[2]).toMatchObject({ actor: { kind: 'local_admin' }, target: { id: user.id } });
    expect(events[0]?.actor.kind).toBe('user');
    expect(listed.stdout).not.toContain(secret);
    expect(listed.stdout).not.toContain(tokenSecret);

    const piped = await lake('admin', 'audit', '--action', 'user.created');
    expect(piped.code, piped.stderr).toBe(0);
    const lines = piped.stdout.trim().split('\n');
    expect(lines[0]).toBe('created,action,actor,target,request,address');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`user.created,lake admin,user ${user.id}`);

    const bad = await lake('admin', 'audit', '--limit', '0');
    expect(bad.code).toBe(2);
    // A misspelt action is a usage error naming the actions there are, not an empty log.
    const misspelt = await lake('admin', 'audit', '--action', 'user.creatd');
    expect(misspelt.code).toBe(2);
    expect(misspelt.stdout).toBe('');
    expect(misspelt.stderr).toContain('--action must be pat.created, pat.revoked,');
    expect(misspelt.stderr).toContain("not 'user.creatd'");
  }, 90_000);

  it('records the tokens lake init makes, on a new home and again on an existing one', async () => {
    const home = { LAKE_HOME: join(root, 'init-home'), LAKE_CONFIG_DIR: join(root, 'config') };
    const init = async (): Promise<{
      token: { id: string; secret: string };
      operator_token: { id: string; secret: string };
    }> => {
      const result = await runLake(['init', '--json'], { env: home, timeoutMs: 60_000 });
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as {
        token: { id: string; secret: string };
        operator_token: { id: string; secret: string };
      };
    };
    const first = await init();
    // Run again on a home that exists (or a shared store many organizations use), it mints two more credentials.
    const again = await init();
    const server = await startServeProcess(home);
    try {
      const read = async (
        query: string,
      ): Promise<
        { action: string; actor: { kind: string }; target: { id: string }; details: Record<string, unknown> }[]
      > => {
        const response = await fetch(`${server.url}/audit_events?${query}`, {
          headers: { Authorization: `Bearer ${again.operator_token.secret}` },
        });
        const body = await response.text();
        expect(response.status, body).toBe(200);
        for (const secret of [
          first.token.secret,
          again.token.secret,
          first.operator_token.secret,
          again.operator_token.secret,
        ])
          expect(body).not.toContain(secret);
        return (JSON.parse(body) as { data: never[] }).data;
      };
      const pats = await read('action=pat.created');
      expect(pats.every((e) => e.actor.kind === 'local_admin')).toBe(true);
      const byInit = pats.filter((e) => e.details.name === 'lake init');
      expect(byInit.map((e) => e.target.id).sort()).toEqual([first.token.id, again.token.id].sort());
      // And the home's own owner token, made once, when the first init made the home.
      expect(pats.filter((e) => e.details.name === 'local owner (this home)')).toHaveLength(1);
      expect(pats).toHaveLength(3);
      const operators = await read('action=operator_token.created');
      expect(operators.map((e) => e.target.id).sort()).toEqual(
        [first.operator_token.id, again.operator_token.id].sort(),
      );
    } finally {
      await server.stop();
    }
  }, 90_000);
});
