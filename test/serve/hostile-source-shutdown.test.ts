import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { startFakePostgres, type FakePostgres } from '../helpers/fake-postgres.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait-for.js';

/** Finding 4: with a sync hanging on its source, SIGTERM logged "stopped" and the process stayed until kill -9. */
describe('lake serve stops with a sync hanging on its source', () => {
  let server: ServeProcess | undefined;
  let fake: FakePostgres | undefined;
  afterAll(async () => {
    if (server?.child.exitCode === null) await server.stop('SIGKILL');
    await fake?.stop();
  });

  it('SIGTERM ends the sync (its source connection closed) and the process exits', async () => {
    fake = await startFakePostgres('hang');
    const root = tempDir('lake-hang-stop');
    const home = join(root, 'home');
    const init = JSON.parse((await runLake(['init', '--json'], { env: { LAKE_HOME: home } })).stdout) as {
      token: { secret: string };
    };
    server = await startServeProcess({ LAKE_HOME: home });
    const call = async (method: string, path: string, body?: object): Promise<Record<string, unknown>> =>
      (await (
        await fetch(`${(server as ServeProcess).url}${path}`, {
          method,
          headers: { Authorization: `Bearer ${init.token.secret}`, 'Content-Type': 'application/json' },
          body: body ? JSON.stringify(body) : undefined,
        })
      ).json()) as Record<string, unknown>;
    const source = await call('POST', '/sources', {
      connector: 'postgres',
      name: 'hangs',
      host: '127.0.0.1',
      user: 'u',
      password: 'p',
      config: { port: fake.port, database: 'd', sync_connections: 1 },
    });
    await call('POST', `/sources/${source.id as string}/sync`, {});
    await waitFor(
      () => (fake as FakePostgres).copies(),
      (n) => n > 0,
      10_000,
    );
    expect(fake.copies()).toBe(1);
    const stoppedAt = Date.now();
    const code = await server.stop('SIGTERM');
    // Within the shutdown grace (10 s) and a little more: not waiting on the source for ever.
    expect(Date.now() - stoppedAt).toBeLessThan(15_000);
    expect(code).toBe(0);
    expect(fake.open()).toBe(0);
  }, 60_000);
});
