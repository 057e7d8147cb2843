import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/postgres.js';
import { startReplicaSet, type ReplicaSet } from '../helpers/replicas.js';
import type { ServeProcess } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait-for.js';
import { SLOW_SQL } from '../helpers/queries.js';
import { readSse } from '../helpers/sse.js';

/**
 * PostgreSQL restarting under traffic (its own cluster, never the machine's): replicas answer 503 with Retry-After
 * while it is away, never 500, and serve again by themselves once it is back.
 */
describe('the metadata store restarting under traffic', () => {
  let postgres: PrivatePostgres;
  let set: ReplicaSet;
  let token: string;
  let replicas: ServeProcess[] = [];

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    set = await startReplicaSet(postgres.url, 2, {
      LAKE_RATE_LIMIT_PER_CALLER: '100000',
      LAKE_RATE_LIMIT_PER_ORG: '100000',
    });
    ({ token, replicas } = set);
  }, 90_000);

  afterAll(async () => {
    await set?.stop();
    await postgres?.stop();
  }, 60_000);

  it('a stream open while the store goes away ends and says so in one log line, never a stack trace', async () => {
    const [runner, watcher] = replicas as [ServeProcess, ServeProcess];
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    const submitted = await fetch(`${runner.url}/queries`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ sql: SLOW_SQL }),
    });
    const { id } = (await submitted.json()) as { id: string };
    const stream = await fetch(`${watcher.url}/jobs/${id}/events`, { headers });
    expect(stream.status).toBe(200);
    const requestId = stream.headers.get('Request-Id');
    const reading = readSse(stream);
    // Longer than a state check: the stream's next read of the store fails while it is away.
    await postgres.restart(4000);
    const items = await reading;
    expect(items.filter((i) => i.kind === 'event').map((i) => i.event)).not.toContain('job.succeeded');
    // Before, the failure was Hono's console.error: a raw stack trace on the server's stderr.
    expect(watcher.stderr()).not.toMatch(/^\s+at /m);
    // What the failure was depends on the moment the store went (refused, or cut mid-statement): either way one line.
    const said = watcher.logLines().filter((line) => line.request_id === requestId && line.msg !== 'request');
    expect(said.map((line) => line.msg)).toEqual([
      expect.stringMatching(/^(metadata store unavailable|unhandled error)$/),
    ]);
    await fetch(`${runner.url}/jobs/${id}/cancel`, { method: 'POST', headers }).catch(() => undefined);
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
            : await fetch(`${replica.url}/queries`, {
                method: 'POST',
                headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
                body: JSON.stringify({ sql: 'select 1' }),
              });
        statuses.push(response.status);
        if (response.status === 503) retryAfter.push(response.headers.get('Retry-After'));
        if (response.status >= 500 && response.status !== 503)
          throw new Error(`${response.status}: ${await response.text()}`);
        await response.arrayBuffer().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    // What a load balancer's readiness probe sees meanwhile (no credential).
    const readiness: { replica: number; status: number; message?: string }[] = [];
    const probe = async (replica: ServeProcess, index: number): Promise<void> => {
      while (!stop) {
        const response = await fetch(`${replica.url}/readyz`);
        const body = (await response.json()) as { error?: { message: string } };
        readiness.push({
          replica: index,
          status: response.status,
          ...(body.error ? { message: body.error.message } : {}),
        });
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    // A load balancer puts a replica in rotation once it is ready (its query workers started, say).
    for (const replica of replicas)
      await waitFor(
        async () => (await fetch(`${replica.url}/readyz`)).status,
        (status) => status === 200,
      );
    const running = [
      ...replicas.flatMap((replica) => [0, 1].map((i) => traffic(replica, i))),
      ...replicas.map((replica, index) => probe(replica, index)),
    ];
    // Traffic is flowing on every client before the store goes away.
    await waitFor(
      () => statuses.filter((s) => s < 300).length,
      (ok) => ok >= 8,
    );
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
    const back = await Promise.all(replicas.map((replica) => recovered(replica).catch(() => false)));
    // A replica that died says why.
    expect(back, replicas.map((r) => `exit ${r.child.exitCode}: ${r.stderr()}`).join('\n')).toEqual([true, true]);
    // And the traffic goes on after the store is back, on every client.
    const answeredBefore = statuses.filter((s) => s < 300).length;
    await waitFor(
      () => statuses.filter((s) => s < 300).length,
      (ok) => ok >= answeredBefore + 8,
    );
    // Each replica's probe is back in rotation too, within the second one readiness check answers for (a probe may
    // be told of the failed check for that long after the routes already answer).
    const probed = (index: number): number[] => readiness.filter((r) => r.replica === index).map((r) => r.status);
    for (const index of replicas.keys())
      await waitFor(
        () => probed(index).at(-1),
        (status) => status === 200,
        3_000,
      );
    stop = true;
    await Promise.all(running);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
    // Out of rotation while the store was away, saying so; ready again once it was back.
    const unready = readiness.filter((r) => r.status === 503);
    expect(unready.length).toBeGreaterThan(0);
    expect(unready[0]?.message).toMatch(/metadata/i);
    expect(readiness.filter((r) => r.status !== 200 && r.status !== 503)).toEqual([]);
    // Per replica: in rotation, out once while the store was away, back once it returned; never flapping.
    for (const index of replicas.keys())
      expect(probed(index).filter((status, i, all) => status !== all[i - 1])).toEqual([200, 503, 200]);
    expect(retryAfter.every((value) => value !== null && Number(value) > 0)).toBe(true);
    expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    // The replicas are still the same processes, serving.
    for (const replica of replicas) expect(replica.child.exitCode).toBeNull();
  }, 60_000);
  it('a flood of readiness probes is one round trip to the store a second, not one a probe', async () => {
    const [replica] = replicas as [ServeProcess];
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    const statements = (): number => (readFileSync(postgres.logFile, 'utf8').match(/SELECT 1 AS ok/g) ?? []).length;
    try {
      await admin.query("ALTER SYSTEM SET log_statement = 'all'");
      await admin.query('SELECT pg_reload_conf()');
      // The pool's sessions log statements once they have taken the reload: a probe's check is seen in the log.
      const logged = await waitFor(
        async () => {
          await (await fetch(`${replica.url}/readyz`)).arrayBuffer();
          return statements();
        },
        (n) => n > 0,
        { intervalMs: 200 },
      );
      expect(logged).toBeGreaterThan(0);
      const before = statements();
      const started = Date.now();
      // 8 clients probing as fast as they can for about a second and a half.
      const statuses: number[] = [];
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (Date.now() - started < 1_500) {
            const response = await fetch(`${replica.url}/readyz`);
            statuses.push(response.status);
            await response.arrayBuffer();
          }
        }),
      );
      // Each check is in the log before its probe's answer is sent.
      const pings = statements() - before;
      expect(statuses.length).toBeGreaterThan(50);
      expect(statuses.every((s) => s === 200)).toBe(true);
      // One a second (and one more at each edge), where each probe was one before: the store's pool is everyone's.
      expect(pings).toBeGreaterThanOrEqual(1);
      expect(pings).toBeLessThanOrEqual(4);
    } finally {
      await admin.query('ALTER SYSTEM RESET log_statement');
      await admin.query('SELECT pg_reload_conf()');
      await admin.end();
    }
  }, 30_000);
});
