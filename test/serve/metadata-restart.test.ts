import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/postgres.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

/**
 * PostgreSQL restarting under traffic (its own cluster, never the machine's): replicas answer 503 with Retry-After
 * while it is away, never 500, and serve again by themselves once it is back.
 */
describe('the metadata store restarting under traffic', () => {
  let postgres: PrivatePostgres;
  let token: string;
  const replicas: ServeProcess[] = [];

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    const keys = tempDir('lake-keys');
    for (const name of ['signing.key', 'secrets.key']) writeFileSync(join(keys, name), randomBytes(32).toString('hex'), { mode: 0o600 });
    const env = {
      LAKE_METADATA_URL: postgres.url,
      LAKE_DATA_DIR: join(tempDir('lake-shared'), 'data'),
      LAKE_SIGNING_KEY_FILE: join(keys, 'signing.key'),
      LAKE_SECRETS_KEY_FILE: join(keys, 'secrets.key'),
      LAKE_QUERY_WORKERS: '2',
      LAKE_QUERY_THREADS: '1',
      LAKE_RATE_LIMIT_PER_CALLER: '100000',
      LAKE_RATE_LIMIT_PER_ORG: '100000',
    };
    const init = await runLake(['init', '--json', '--metadata-url', postgres.url], { env: { ...env, LAKE_HOME: join(tempDir('lake-admin'), 'home') } });
    expect(init.code, init.stderr).toBe(0);
    token = (JSON.parse(init.stdout) as { token: { secret: string } }).token.secret;
    replicas.push(...(await Promise.all([1, 2].map((n) => startServeProcess({ ...env, LAKE_HOME: join(tempDir('lake-replica'), `home${n}`) })))));
  }, 90_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop('SIGKILL')));
    await postgres?.stop();
  }, 60_000);

  it('gives 503 with Retry-After, never a 500, and recovers by itself', async () => {
    const statuses: number[] = [];
    const retryAfter: (string | null)[] = [];
    let stop = false;
    const traffic = async (replica: ServeProcess, i: number): Promise<void> => {
      while (!stop) {
        const response =
          i % 2 === 0
            ? await fetch(`${replica.url}/jobs?limit=1`, { headers: { Authorization: `Bearer ${token}` } })
            : await fetch(`${replica.url}/queries`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ sql: 'select 1' }) });
        statuses.push(response.status);
        if (response.status === 503) retryAfter.push(response.headers.get('Retry-After'));
        if (response.status >= 500 && response.status !== 503) throw new Error(`${response.status}: ${await response.text()}`);
        await response.arrayBuffer().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const running = replicas.flatMap((replica) => [0, 1].map((i) => traffic(replica, i)));
    await new Promise((r) => setTimeout(r, 1000));
    await postgres.restart(2000);
    // Back: every replica answers again without being restarted.
    const recovered = async (replica: ServeProcess): Promise<boolean> => {
      for (let i = 0; i < 100; i++) {
        const response = await fetch(`${replica.url}/jobs?limit=1`, { headers: { Authorization: `Bearer ${token}` } });
        if (response.status === 200) return true;
        await new Promise((r) => setTimeout(r, 200));
      }
      return false;
    };
    expect(await Promise.all(replicas.map(recovered))).toEqual([true, true]);
    await new Promise((r) => setTimeout(r, 500));
    stop = true;
    await Promise.all(running);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
    expect(retryAfter.every((value) => value !== null && Number(value) > 0)).toBe(true);
    expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    // The replicas are still the same processes, serving.
    for (const replica of replicas) expect(replica.child.exitCode).toBeNull();
  }, 60_000);
});
