import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkerPoolSettings } from '../../src/service/engine/worker-settings.js';
import { applyMigrations } from '../../src/service/store/migrate.js';
import { MIGRATIONS } from '../../src/service/store/migrations.js';
import { busiestChild, processTree } from '../helpers/memory-guard.js';
import { expectError, finished, jsonClient, SLOW_SQL, submit, submitOk, type Json } from '../helpers/queries.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait-for.js';
import { overHttp, type Harness } from '../helpers/transports.js';

/** Two workers, one per organization at a time: small enough to fill in a test. */
const POOL: WorkerPoolSettings = {
  workers: 2,
  workersPerOrganization: 1,
  killGraceMs: 1000,
  recycleAfterQueries: 500,
  recycleGrowthBytes: 512 * 2 ** 20,
  memoryCgroups: true,
};

describe('queued queries on the worker pool', () => {
  let api: Harness | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  async function start(pool: Partial<WorkerPoolSettings> = {}, maxInFlight = 8): Promise<Harness> {
    api = await overHttp.start({
      services: {
        workerPool: { ...POOL, ...pool },
        querySettings: { maxInFlight, timeoutMs: 60_000, memoryLimit: '256MB' } as never,
      },
    });
    return api;
  }

  async function neighbourToken(harness: Harness): Promise<string> {
    const other = await harness.home.directory.createOrganization('Neighbour');
    const user = await harness.home.directory.createUser(other.id, 'N', 'owner');
    return (
      await harness.home.credentials.issue({
        kind: 'pat',
        organizationId: other.id,
        userId: user.id,
        name: 'n',
        scopes: ['query:read', 'jobs:read', 'jobs:manage'],
      })
    ).secret;
  }

  const job = async (harness: Harness, id: string, token?: string): Promise<Json> =>
    (await (await harness.request(`/jobs/${id}`, { token })).json()) as Json;
  const events = async (harness: Harness, id: string): Promise<string[]> => {
    const rows = await harness.home.db.all<{ type: string }>(
      'SELECT type FROM job_events WHERE job_id = ? ORDER BY seq',
      [id],
    );
    return rows.map((r) => r.type);
  };
  const cancel = (harness: Harness, id: string): Promise<Response> =>
    harness.request(`/jobs/${id}/cancel`, { method: 'POST' });

  it("queues past the organization's share, starts its queries in order, and another organization runs at once", async () => {
    const harness = await start();
    const first = await submitOk(harness, SLOW_SQL);
    const second = await submitOk(harness, `${SLOW_SQL} -- 2`);
    const third = await submitOk(harness, `${SLOW_SQL} -- 3`);
    expect([first.status, second.status, third.status]).toEqual(['running', 'queued', 'queued']);
    expect((await job(harness, second.id)).status).toBe('queued');

    // The neighbour's query takes the free worker at once, ahead of the two queued.
    // "At once" is an order, not a clock: it runs and ends while the first organization's queue has not moved (a
    // wall-time bound failed on a loaded machine, where a worker's start alone can take seconds).
    const token = await neighbourToken(harness);
    const small = (await (await submit(harness, 'select 42 as n', { token })).json()) as Json;
    expect(small.status).toBe('running');
    const done = (await (
      await harness.request(`/queries/${small.id}?wait=30&format=inline`, { token })
    ).json()) as Json;
    expect(done.data).toEqual([{ n: 42 }]);
    expect((await job(harness, second.id)).status).toBe('queued');
    expect((await job(harness, first.id)).status).toBe('running');

    // When the first ends, the second (not the third) starts.
    await cancel(harness, first.id);
    await finished(harness, first.id);
    await waitFor(
      () => job(harness, second.id),
      (j) => j.status !== 'queued',
      5000,
    );
    expect((await job(harness, second.id)).status).toBe('running');
    expect((await job(harness, third.id)).status).toBe('queued');
    for (const q of [second, third]) await cancel(harness, q.id);
    for (const q of [second, third]) expect((await finished(harness, q.id)).status).toBe('cancelled');
  });

  it('cancelling a queued query is atomic: cancelled at once, never runs', async () => {
    const harness = await start();
    const running = await submitOk(harness, SLOW_SQL);
    const queued = await submitOk(harness, 'select 1 as never');
    expect(queued.status).toBe('queued');
    const response = await cancel(harness, queued.id);
    const body = (await response.json()) as Json;
    expect(response.status).toBe(200);
    expect(body.job.status).toBe('cancelled');
    expect(body.execution_may_continue).toBe(false);
    // The worker frees up; the cancelled query still never starts.
    await cancel(harness, running.id);
    await finished(harness, running.id);
    // What must not happen is given a moment to happen: a start would follow the freed worker at once.
    await new Promise((r) => setTimeout(r, 300));
    expect(await events(harness, queued.id)).toEqual(['job.created', 'job.cancelled']);
    const query = (await (await harness.request(`/queries/${queued.id}`)).json()) as Json;
    expect(query.status).toBe('cancelled');
    expect(query.error.code).toBe('cancelled');
  });

  it('queued queries count toward the in-flight ceiling: 429 too_many_queries', async () => {
    const harness = await start({}, 3);
    const ids = [
      (await submitOk(harness, SLOW_SQL)).id,
      (await submitOk(harness, SLOW_SQL)).id,
      (await submitOk(harness, SLOW_SQL)).id,
    ];
    await expectError(await submit(harness, 'select 1'), 429, 'too_many_queries');
    for (const id of ids) await cancel(harness, id);
    for (const id of ids) expect((await finished(harness, id)).status).toBe('cancelled');
    expect((await finished(harness, (await submitOk(harness, 'select 1')).id)).status).toBe('succeeded');
  });

  it('a worker killed under its query fails only that query (worker_crashed) and is replaced', async () => {
    const harness = await start();
    const victim = await submitOk(harness, SLOW_SQL);
    // The worker that runs the query is the one whose CPU time climbs: waited for, not guessed after a pause.
    const busiest = await waitFor(busiestChild(process.pid), (worker) => worker.ticks >= 20, 10_000);
    // (Never pid 0 here: that would signal this whole process group.)
    expect(busiest.ticks).toBeGreaterThanOrEqual(20);
    const workersBefore = processTree(process.pid).slice(1);
    process.kill(busiest.pid, 'SIGKILL');
    const ended = await finished(harness, victim.id);
    expect(ended.status).toBe('failed');
    expect(ended.error.code).toBe('worker_crashed');
    expect((await job(harness, victim.id)).error.code).toBe('worker_crashed');
    const after = await finished(harness, (await submitOk(harness, 'select 7 as n')).id, '&format=inline');
    expect(after.data).toEqual([{ n: 7 }]);
    expect(
      await waitFor(
        () => processTree(process.pid).length - 1,
        (n) => n >= workersBefore.length,
        3_000,
      ),
    ).toBe(workersBefore.length);
  });

  it('recycles a worker after its documented number of queries', async () => {
    const harness = await start({ recycleAfterQueries: 2 });
    const pidsSeen = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const done = await finished(harness, (await submitOk(harness, `select ${i} as n`)).id, '&format=inline');
      expect(done.data).toEqual([{ n: i }]);
      for (const pid of processTree(process.pid).slice(1)) pidsSeen.add(pid);
    }
    // 2 workers and the inspector at first; every second query retires a worker and a new one takes its place. A
    // replacement starts in the background, so the last may appear after the last query: the tree is read until it
    // has (read only after each query, a slow start left 4 seen).
    const seen = await waitFor(
      () => {
        for (const pid of processTree(process.pid).slice(1)) pidsSeen.add(pid);
        return pidsSeen.size;
      },
      (count) => count >= 5,
      5_000,
    );
    expect(seen).toBeGreaterThanOrEqual(5);
  });

  it('a query starting while its lease is renewed is never taken for cancelled (many small queries, a fast lease loop)', async () => {
    // Leases renewed every 150 ms: each renewal looks at every query held here, some of them between being taken
    // from the queue and reaching a worker. (A 150 ms lease, renewed every 50 ms, once expired for real when the
    // whole suite loaded both cores: a stall longer than the lease is a lost worker, which is not what this tests.)
    api = await overHttp.start({
      services: {
        workerPool: { ...POOL, workersPerOrganization: 2 },
        querySettings: { maxInFlight: 8, timeoutMs: 60_000, memoryLimit: '256MB' } as never,
        jobSettings: { leaseMs: 450 },
      },
    });
    const harness = api;
    const outcomes: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let n = next++; n < 60; n = next++) {
          const done = await finished(harness, (await submitOk(harness, `select ${n} as n`)).id);
          outcomes.push(done.status === 'succeeded' ? 'succeeded' : JSON.stringify(done.error));
        }
      }),
    );
    expect(outcomes.filter((o) => o !== 'succeeded')).toEqual([]);
    expect(outcomes).toHaveLength(60);
  });
});

describe('result limits in the local engine', () => {
  let api: Harness | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it("a result past the per-result cap fails result_too_large; past the organization's storage, result_storage_full, then 409", async () => {
    const homeDir = join(tempDir('lake-result-limits'), 'home');
    api = await overHttp.start({ homeDir, services: { querySettings: { maxResultBytes: 100_000 } as never } });
    const big = await finished(api, (await submitOk(api, 'select i, random() as r from range(3000000) t(i)')).id);
    expect(big.status).toBe('failed');
    expect(big.error.code).toBe('result_too_large');
    expect(big.error.message).toMatch(/limit for one result/);
    await api.close();

    api = await overHttp.start({
      homeDir,
      services: { querySettings: { maxResultBytes: 100_000, orgResultStorageBytes: 2_000 } as never },
    });
    // What is left of 2,000 bytes cannot hold a result of a few kilobytes: the query fails, nothing is kept.
    const wide = await finished(api, (await submitOk(api, 'select i from range(5000) t(i)')).id);
    expect(wide.status).toBe('failed');
    expect(wide.error.code).toBe('result_storage_full');
    await api.close();

    // Results kept under a larger limit; the limit then lowered below them: new queries are refused until retention frees some.
    api = await overHttp.start({ homeDir });
    for (let i = 0; i < 3; i++)
      expect((await finished(api, (await submitOk(api, 'select i from range(5000) t(i)')).id)).status).toBe(
        'succeeded',
      );
    await api.close();
    api = await overHttp.start({ homeDir, services: { querySettings: { orgResultStorageBytes: 2_000 } as never } });
    const list = jsonClient(api);
    const recorded = (await list('GET', '/queries?limit=100')).data.length;
    const resultDirs = () => readdirSync(api?.services.lake.layout.resultsDir(api.home.organization.id) as string);
    const dirsBefore = resultDirs().length;
    const body = await expectError(await submit(api, 'select 1'), 409, 'result_storage_full');
    expect(body.message).toMatch(/removed 48 h after their query/);
    // Refused as it would be recorded: no query is recorded, and the folder made for its result is gone again.
    expect((await list('GET', '/queries?limit=100')).data).toHaveLength(recorded);
    expect(resultDirs()).toHaveLength(dirsBefore);
    expect(await api.services.queries.store.resultBytesKept(api.home.organization.id)).toBeGreaterThanOrEqual(2_000);

    // Retention removes them, and with them what they counted: queries are accepted again.
    expect(await api.services.queries.purgeExpired(Math.floor(Date.now() / 1000) + 49 * 3600)).toBe(5);
    expect(await api.services.queries.store.resultBytesKept(api.home.organization.id)).toBe(0);
    expect((await finished(api, (await submitOk(api, 'select 1 as one')).id)).status).toBe('succeeded');
  });

  it('a CSV or Arrow form counts against the organization’s result storage, is refused when it is full, and goes with its query', async () => {
    const homeDir = join(tempDir('lake-result-forms'), 'home');
    api = await overHttp.start({ homeDir });
    const org = api.home.organization.id;
    const done = await finished(api, (await submitOk(api, 'select i, i * 2 as j from range(20000) t(i)')).id);
    const parquetBytes = await api.services.queries.store.resultBytesKept(org);
    await api.close();
    // Room for a little more than the Parquet: one form may be made, and then the storage is past its limit.
    api = await overHttp.start({
      homeDir,
      services: { querySettings: { orgResultStorageBytes: parquetBytes + 1_000 } as never },
    });
    const csv = (await (await api.request(`/queries/${done.id}?format=files&file_format=csv`)).json()) as Json;
    const csvBytes = csv.files[0].bytes as number;
    expect(csvBytes).toBeGreaterThan(1_000);
    expect(await api.services.queries.store.resultBytesKept(org)).toBe(parquetBytes + csvBytes);
    // Asked again, it is the same file, counted once; another form is refused; Parquet is still served.
    expect((await api.request(`/queries/${done.id}?format=files&file_format=csv`)).status).toBe(200);
    expect(await api.services.queries.store.resultBytesKept(org)).toBe(parquetBytes + csvBytes);
    await expectError(
      await api.request(`/queries/${done.id}?format=files&file_format=arrow`),
      409,
      'result_storage_full',
    );
    expect((await api.request(`/queries/${done.id}`)).status).toBe(200);
    // Retention removes the query, its result and its forms, and what they counted.
    expect(await api.services.queries.purgeExpired(Math.floor(Date.now() / 1000) + 49 * 3600)).toBe(1);
    expect(await api.services.queries.store.resultBytesKept(org)).toBe(0);
  });

  it('a store from before the running total counts the results it already keeps', async () => {
    api = await overHttp.start();
    for (let i = 0; i < 2; i++)
      expect((await finished(api, (await submitOk(api, 'select i from range(5000) t(i)')).id)).status).toBe(
        'succeeded',
      );
    const { db, organization } = api.home;
    const kept = await api.services.queries.store.resultBytesKept(organization.id);
    expect(kept).toBeGreaterThan(0);
    // As the store stood at schema version 15: no total yet.
    await db.transaction([], async () => {
      await db.execScript('DROP TABLE result_storage');
      await db.run('DELETE FROM schema_migrations WHERE version = 16');
    });
    await applyMigrations(db, MIGRATIONS);
    expect(await api.services.queries.store.resultBytesKept(organization.id)).toBe(kept);
  });
});
