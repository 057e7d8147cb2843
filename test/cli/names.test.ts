import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** Commands take a source's, send's or canvas's name where they took only its id; users are listed and named. */
describe('names instead of ids', () => {
  const root = tempDir('lake-names');
  const env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
  const lake = (...args: string[]) => runLake(args, { env, timeoutMs: 60_000 });

  it('sources, syncs, sends and canvases by name; an unknown name says what is close', async () => {
    const created = JSON.parse(
      (await lake('sources', 'create', '--connector', 'sample', '--name', 'Shop', '--json')).stdout,
    ) as { id: string };
    const got = await lake('sources', 'get', 'shop', '--json');
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout).id).toBe(created.id);
    const synced = await lake('sync', 'start', 'Shop', '--json');
    expect(synced.code, synced.stderr).toBe(0);
    expect((await lake('sync', 'status', 'SHOP')).code).toBe(0);
    // A sync's events say which table, in which phase, with how many rows (they said only the event's name).
    const events = await lake('jobs', 'events', JSON.parse(synced.stdout).id as string);
    expect(events.stdout).toMatch(/sync\.progress {2}\w+\.accounts committed \d[\d,]*\/\d/);
    expect((await lake('sources', 'pause', 'Shop')).code).toBe(0);
    expect((await lake('sources', 'resume', 'Shop')).code).toBe(0);

    const unknown = await lake('sources', 'get', 'shopp');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('source_not_found');
    expect(unknown.stderr).toContain(`Did you mean 'Shop' (${created.id})`);

    const send = JSON.parse(
      (
        await lake(
          'sends',
          'create',
          '--name',
          'Nightly export',
          '--sql',
          'select 1 as x',
          '--to',
          'webhook',
          '--url',
          'http://127.0.0.1:9/x',
          '--paused',
          '--json',
        )
      ).stdout,
    ) as { id: string };
    expect(JSON.parse((await lake('sends', 'get', 'nightly export', '--json')).stdout).id).toBe(send.id);
    expect((await lake('sends', 'resume', 'Nightly export')).code).toBe(0);
    expect((await lake('sends', 'delete', 'Nightly export')).code).toBe(0);

    const canvas = JSON.parse((await lake('canvas', 'create', '--name', 'Board', '--json')).stdout) as { id: string };
    expect((await lake('canvas', 'add', 'Board', '--name', 'orders', '--table', 'demo.orders')).code).toBe(0);
    expect(JSON.parse((await lake('canvas', 'get', 'board', '--json')).stdout)).toMatchObject({
      id: canvas.id,
      elements: [expect.objectContaining({ name: 'orders' })],
    });
  }, 90_000);

  it('lake admin user ls lists people, and grants take a user by name', async () => {
    const made = JSON.parse((await lake('admin', 'user', 'create', '--name', 'Ana', '--json')).stdout) as {
      id: string;
    };
    const listed = await lake('admin', 'user', 'ls', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).data).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: made.id, name: 'Ana', role: 'member' })]),
    );
    const plain = await lake('admin', 'user', 'ls');
    expect(plain.stdout.split('\n')[0]).toBe('id,name,email,role,created,state');
    const granted = await lake('admin', 'grant', 'demo.orders', '--to', 'user:Ana', '--json');
    expect(granted.code, granted.stderr).toBe(0);
    expect(JSON.parse(granted.stdout).grantee).toBe(`user:${made.id}`);
    expect((await lake('admin', 'grant', 'demo.orders', '--to', 'user:Nobody')).code).toBe(2);
  }, 60_000);
});
