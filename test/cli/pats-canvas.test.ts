import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { startServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

describe('lake pats, lake canvas and team API keys', () => {
  let env: Record<string, string>;
  beforeAll(() => {
    const root = tempDir('lake-pats-cli');
    env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
  });
  const lake = (...args: string[]) => runLake(args, { env });

  it('creates, lists and revokes a personal access token; the revoked token fails at once', async () => {
    const created = JSON.parse(
      (
        await lake(
          'pats',
          'create',
          '--name',
          'ci',
          '--scopes',
          'query:read,jobs:read',
          '--expires-in-days',
          '7',
          '--json',
        )
      ).stdout,
    ) as { id: string; secret: string };
    expect(created.secret).toMatch(/^pat_/);
    const listed = await lake('pats', 'ls');
    expect(listed.stdout.split('\n')[0]).toBe('id,name,scopes,last_used,expires,revoked');
    expect(listed.stdout).toMatch(new RegExp(`${created.id},ci,query:read jobs:read,`));
    expect(listed.stdout).not.toContain(created.secret);
    expect((await runLake(['--token', created.secret, 'whoami'], { env })).code).toBe(0);
    expect((await lake('pats', 'revoke', created.id)).code).toBe(0);
    const after = await runLake(['--token', created.secret, 'whoami'], { env });
    expect(after.code).toBe(4);
    expect(after.stderr).toContain('credentials_revoked');
  });

  it('a canvas element is downloadable with a team API key over HTTP', async () => {
    const canvas = JSON.parse((await lake('canvas', 'create', '--name', 'Board', '--json')).stdout) as { id: string };
    const element = (await lake('canvas', 'add', canvas.id, '--name', 'Top', '--sql', 'select 1 as one')).stdout.trim();
    expect(element).toMatch(/^el_/);
    expect((await lake('canvas', 'get', canvas.id)).stdout).toContain('Top: select 1 as one');
    expect((await lake('canvas', 'ls')).stdout).toMatch(new RegExp(`${canvas.id},Board,1`));
    const key = JSON.parse((await lake('admin', 'team-key', 'create', '--name', 'legacy', '--json')).stdout) as {
      object: string;
      secret: string;
    };
    expect(key).toMatchObject({ object: 'team_api_key', secret: expect.stringMatching(/^tak_/) });
    const server = await startServeProcess({ LAKE_HOME: env.LAKE_HOME as string });
    try {
      const response = await fetch(`${server.url}/data/table`, {
        method: 'POST',
        headers: { 'x-api-key': key.secret, 'Content-Type': 'application/json' },
        body: JSON.stringify({ canvasId: canvas.id, elementId: element }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ object: 'table_data', rows: [{ one: 1 }], row_count: 1 });
    } finally {
      await server.stop();
    }
    expect(JSON.stringify(server.logLines())).not.toContain(key.secret);
  });

  it('deletes a canvas by name or id; a pipe gets nothing on stdout, --json the deletion', async () => {
    const canvas = JSON.parse((await lake('canvas', 'create', '--name', 'Old board', '--json')).stdout) as {
      id: string;
    };
    const deleted = await lake('canvas', 'delete', 'Old board');
    expect(deleted).toMatchObject({ code: 0, stdout: '' });
    expect(deleted.stderr).toContain(`deleted canvas ${canvas.id}`);
    const again = await lake('canvas', 'get', canvas.id);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('canvas_not_found');
    const other = JSON.parse((await lake('canvas', 'create', '--name', 'Other', '--json')).stdout) as { id: string };
    expect(JSON.parse((await lake('canvas', 'delete', other.id, '--json')).stdout)).toEqual({
      object: 'canvas_deletion',
      id: other.id,
      deleted: true,
    });
  });
});
