import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createMetadataDatabase } from '../helpers/postgres.js';
import { startReplicaSet, type ReplicaSet } from '../helpers/replicas.js';
import type { ServeProcess } from '../helpers/serve.js';
import { busiestChild } from '../helpers/memory-guard.js';
import { readSse } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait-for.js';

type Json = Record<string, any>;

/** Three `lake serve` processes on one PostgreSQL metadata database (test/helpers/replicas.ts). */
describe('three lake serve replicas on one PostgreSQL store', () => {
  let database: { url: string; drop(): Promise<void> };
  let set: ReplicaSet;
  let token: string;
  let replicas: ServeProcess[] = [];

  const call = async (
    replica: ServeProcess,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Response> =>
    fetch(`${replica.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const json = async (
    replica: ServeProcess,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Json> => (await (await call(replica, method, path, body, headers)).json()) as Json;
  /** The job as a replica reports it, looked at every `everyMs` until `until` holds (or `tries` run out). */
  const jobWhen = async (
    replica: ServeProcess,
    id: string,
    until: (job: Json) => boolean,
    tries = 100,
    everyMs = 100,
  ): Promise<Json> => {
    let job: Json = {};
    for (let i = 0; i < tries; i++) {
      job = await json(replica, 'GET', `/jobs/${id}`);
      if (until(job)) break;
      await new Promise((r) => setTimeout(r, everyMs));
    }
    return job;
  };
  const isRunning = (job: Json): boolean => job.status === 'running';
  const hasEnded = (job: Json): boolean => job.status !== 'queued' && job.status !== 'running';

  beforeAll(async () => {
    database = await createMetadataDatabase();
    set = await startReplicaSet(database.url, 3, {
      LAKE_JOB_LEASE_SECONDS: '3',
      LAKE_RATE_LIMIT_PER_CALLER: '0',
      LAKE_RATE_LIMIT_PER_ORG: '0',
    });
    ({ token, replicas } = set);
  }, 90_000);

  afterAll(async () => {
    await set?.stop();
    await database?.drop();
  }, 60_000);

  it('a query submitted on replica 1 is polled on replica 2 and its result downloaded from replica 3, the same bytes', async () => {
    const [one, two, three] = replicas as [ServeProcess, ServeProcess, ServeProcess];
    const submitted = await json(one, 'POST', '/queries', {
      sql: 'select range as n, md5(range::varchar) as h from range(5000)',
    });
    expect(submitted.id).toMatch(/^q/);
    let polled: Json = submitted;
    for (let i = 0; i < 100 && polled.status !== 'succeeded'; i++)
      polled = await json(two, 'GET', `/queries/${submitted.id}?wait=2`);
    expect(polled, JSON.stringify(polled)).toMatchObject({ id: submitted.id, status: 'succeeded' });
    const link = new URL(polled.files[0].url as string);
    const fromThree = Buffer.from(await (await fetch(`${three.url}${link.pathname}${link.search}`)).arrayBuffer());
    const fromOne = Buffer.from(await (await fetch(`${one.url}${link.pathname}${link.search}`)).arrayBuffer());
    expect(fromThree.length).toBeGreaterThan(1000);
    expect(fromThree.equals(fromOne)).toBe(true);
  });

  it('ten concurrent POST /queries with one Idempotency-Key, spread over the replicas, create exactly one query', async () => {
    const key = `replicas-${randomBytes(4).toString('hex')}`;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        json(
          replicas[i % 3] as ServeProcess,
          'POST',
          '/queries',
          { sql: 'select 7 as seven' },
          { 'Idempotency-Key': key },
        ),
      ),
    );
    expect(new Set(answers.map((a) => a.id)).size).toBe(1);
    const jobs = await json(replicas[0] as ServeProcess, 'GET', '/jobs?limit=100');
    expect(jobs.data.filter((j: Json) => j.id === answers[0]?.id)).toHaveLength(1);
  });

  it('cancel on replica 3 stops a query running on replica 1 within about a second', async () => {
    const [one, two, three] = replicas as [ServeProcess, ServeProcess, ServeProcess];
    const submitted = await json(one, 'POST', '/queries', {
      sql: 'select count(*) from range(1000000000000) t(i) where i % 7 = 3',
    });
    await jobWhen(two, submitted.id, isRunning, 50);
    // Cancelled once a worker of replica 1 is busy with it.
    expect(
      (await waitFor(busiestChild(one.child.pid as number), (w) => w.ticks >= 20, 10_000)).ticks,
    ).toBeGreaterThanOrEqual(20);
    const asked = performance.now();
    const cancellation = await json(three, 'POST', `/jobs/${submitted.id}/cancel`);
    expect(cancellation.object).toBe('job_cancellation');
    const job = await jobWhen(two, submitted.id, hasEnded, 100, 50);
    expect(job.status).toBe('cancelled');
    expect(performance.now() - asked).toBeLessThan(1500);
  });

  it('cancel on replica 3 stops a send run on replica 1 within a second, its query with it', async () => {
    const [one, two, three] = replicas as [ServeProcess, ServeProcess, ServeProcess];
    const send = await json(one, 'POST', '/sends', {
      name: 'never delivered',
      sql: 'select count(*) as n from range(1000000000000) t(i) where i % 7 = 3',
      // Refused by nothing, reached by nothing: the run is cancelled while its query runs.
      destination: { type: 'webhook', url: 'http://127.0.0.1:9/hook' },
    });
    expect(send.id).toMatch(/^snd_/);
    const run = await json(one, 'POST', `/sends/${send.id}/run`);
    await jobWhen(two, run.id, isRunning, 50);
    const asked = performance.now();
    const cancellation = await json(three, 'POST', `/jobs/${run.id}/cancel`);
    expect(cancellation.object).toBe('job_cancellation');
    const job = await jobWhen(two, run.id, hasEnded, 100, 25);
    expect(job.status).toBe('cancelled');
    // The run is a job of the runtime on replica 1: the cancel reaches it as the job's event (NOTIFY), at once.
    expect(performance.now() - asked).toBeLessThan(1000);
  });

  it('a query queued on a replica with no worker free for it is claimed and run by one that has', async () => {
    const [one, two] = replicas as [ServeProcess, ServeProcess];
    // The earlier tests' cancelled queries have ended everywhere, so replica 1's share for the organization is free
    // (a cancelled send's query still stopping there made the long query below queue and run elsewhere).
    const live = async (): Promise<number> =>
      (await json(one, 'GET', '/jobs?limit=100')).data.filter(
        (j: Json) => j.status === 'running' || j.status === 'queued',
      ).length;
    expect(await waitFor(live, (n) => n === 0, 15_000)).toBe(0);
    // Two workers per replica, one per organization: a long query holds this organization's share on replica 1.
    const long = await json(one, 'POST', '/queries', {
      sql: 'select count(*) from range(1000000000000) t(i) where i % 7 = 3',
    });
    await jobWhen(two, long.id, isRunning, 50);
    const started = performance.now();
    const waiting = await json(one, 'POST', '/queries', {
      sql: 'select 41 + 1 as answer',
      tags: ['claimed-elsewhere'],
    });
    expect(waiting.status).toBe('queued');
    // Waited for on the replica that queued it, though another runs it.
    const answered = await json(one, 'GET', `/queries/${waiting.id}?wait=10&format=inline`);
    expect(answered).toMatchObject({ status: 'succeeded', data: [{ answer: 42 }] });
    expect(performance.now() - started).toBeLessThan(5000);
    // Replica 1 could not have run it: its share for this organization is still held by the long query.
    expect((await json(two, 'GET', `/jobs/${long.id}`)).status).toBe('running');
    const events = await readSse(await call(two, 'GET', `/jobs/${waiting.id}/events`));
    expect(events.filter((e) => e.event === 'job.running')).toHaveLength(1);
    // The replica that ran it metered it under the tags it was accepted with elsewhere.
    const byTag = (await json(two, 'GET', '/usage')).by_tag as Json[];
    expect(byTag.find((t) => t.tag === 'claimed-elsewhere')).toMatchObject({ queries_run: 1 });
    await json(one, 'POST', `/jobs/${long.id}/cancel`);
  });

  it('an event stream on replica 2 sees a sync that runs on replica 1 as it happens', async () => {
    const [one, two] = replicas as [ServeProcess, ServeProcess];
    const source = await json(one, 'POST', '/sources', {
      connector: 'sample',
      name: `Replicated ${randomBytes(3).toString('hex')}`,
      // Large enough to run for seconds (at scale 1,500 it once took 0.9996 s, under the 1 s this test watches for).
      config: { scale: 4000 },
    });
    const sync = await json(one, 'POST', `/sources/${source.id}/sync`, {});
    // When replica 1's record says the sync ended, polled quickly, against when replica 2's stream says so.
    let seenFinished = 0;
    const watching = (async () => {
      for (let i = 0; i < 600; i++) {
        const job = await json(one, 'GET', `/jobs/${sync.id}`);
        if (job.status === 'succeeded' || job.status === 'failed') return (seenFinished = performance.now());
        await new Promise((r) => setTimeout(r, 50));
      }
      return 0;
    })();
    const opened = performance.now();
    const items = await readSse(await call(two, 'GET', `/jobs/${sync.id}/events`), (all) =>
      all.some((e) => e.event === 'job.succeeded' || e.event === 'job.failed'),
    );
    const streamEnded = opened + (items.at(-1)?.at ?? 0);
    await watching;
    expect(items.filter((e) => e.event === 'sync.progress').length).toBeGreaterThan(3);
    expect(items.at(-1)?.event).toBe('job.succeeded');
    // It ran long enough to be watched: the stream saw it start and run, not only its end.
    expect(
      items.filter((e) => e.event === 'sync.progress').at(-1)!.at - items.find((e) => e.event === 'sync.progress')!.at,
    ).toBeGreaterThan(1000);
    // Without a notice between replicas the stream would wait for its 3 s state check.
    expect(Math.abs(streamEnded - seenFinished)).toBeLessThan(1000);
  }, 60_000);

  it('a source whose schedule comes due is synced once by the three replicas, and its next tick is an interval on', async () => {
    const [one, two] = replicas as [ServeProcess, ServeProcess];
    const source = await json(one, 'POST', '/sources', {
      connector: 'sample',
      name: `Scheduled ${randomBytes(3).toString('hex')}`,
      schedule: { interval: '1m' },
    });
    const store = new pg.Client({ connectionString: database.url });
    await store.connect();
    try {
      const syncsOf = async (): Promise<{ id: string }[]> =>
        (await store.query<{ id: string }>('SELECT id FROM syncs WHERE source_id = $1', [source.id])).rows;
      // Its first tick is a minute away: brought forward to now in the shared store, as if the minute had passed.
      const due = Math.floor(Date.now() / 1000);
      await store.query('UPDATE sources SET next_sync = $1 WHERE id = $2', [due, source.id]);
      const started = await waitFor(syncsOf, (rows) => rows.length > 0, 10_000);
      expect(started).toHaveLength(1);
      const job = await jobWhen(two, (started[0] as { id: string }).id, hasEnded, 200);
      expect(job).toMatchObject({ kind: 'sync', status: 'succeeded' });
      // Every replica looked at the due source at least twice more meanwhile: still one sync.
      await new Promise((r) => setTimeout(r, 2500));
      expect(await syncsOf()).toHaveLength(1);
      const after = await json(two, 'GET', `/sources/${source.id}`);
      expect(after.latest_sync).toMatchObject({ id: job.id, trigger: 'schedule' });
      expect(after.next_sync_at).toBe(due + 60);
    } finally {
      await store.end();
    }
  }, 60_000);

  it('kill -9 of the replica running a sync: another reports worker_lost within the lease; the old snapshot stays; a new sync is claimed once and commits', async () => {
    const [one, two] = replicas as [ServeProcess, ServeProcess];
    const source = await json(one, 'POST', '/sources', {
      connector: 'sample',
      name: `Crash ${randomBytes(3).toString('hex')}`,
      config: { scale: 1 },
    });
    const first = await json(one, 'POST', `/sources/${source.id}/sync`, {});
    await jobWhen(two, first.id, hasEnded, 200);
    const schema = source.destination_schema ?? source.lake_schema;
    const countSql = { sql: `select count(*) as n from lake.${schema}.payments` };
    const before = await json(two, 'POST', '/queries', countSql);
    expect(before.data ?? (await json(two, 'GET', `/queries/${before.id}?wait=20&format=inline`)).data).toEqual([
      { n: 800 },
    ]);

    await json(one, 'PATCH', `/sources/${source.id}`, { config: { scale: 400 } });
    const big = await json(one, 'POST', `/sources/${source.id}/sync`, { full_refresh: true });
    const running = await jobWhen(two, big.id, isRunning, 100, 50);
    expect(running.status).toBe('running');
    const killed = performance.now();
    await one.stop('SIGKILL');
    // Started again whatever this test finds, so the tests after it have their three replicas.
    onTestFinished(async () => {
      replicas[0] = await set.start(1);
    });
    const lost = await jobWhen(two, big.id, hasEnded, 200);
    expect(lost).toMatchObject({ status: 'failed', error: { code: 'worker_lost' } });
    expect(performance.now() - killed).toBeLessThan(3000 + 2000);

    const after = await json(two, 'POST', '/queries', countSql);
    expect(after.data ?? (await json(two, 'GET', `/queries/${after.id}?wait=20&format=inline`)).data).toEqual([
      { n: 800 },
    ]);

    await json(two, 'PATCH', `/sources/${source.id}`, { config: { scale: 2 } });
    const again = await json(two, 'POST', `/sources/${source.id}/sync`, { full_refresh: true });
    const done = await jobWhen(two, again.id, hasEnded, 300);
    expect(done.status).toBe('succeeded');
    const events = await readSse(await call(two, 'GET', `/jobs/${again.id}/events`));
    expect(events.filter((e) => e.event === 'job.running')).toHaveLength(1);
    const now = await json(two, 'POST', '/queries', countSql);
    expect(now.data ?? (await json(two, 'GET', `/queries/${now.id}?wait=20&format=inline`)).data).toEqual([
      { n: 1600 },
    ]);
  }, 90_000);

  it('a replica shutting down gives its queued queries back to the shared queue; another runs them once it has a worker free', async () => {
    const [one, two, three] = replicas as [ServeProcess, ServeProcess, ServeProcess];
    const endless = { sql: 'select count(*) from range(1000000000000) t(i) where i % 7 = 3' };
    // The organization's share of workers is taken on every replica.
    const longs = [
      await json(one, 'POST', '/queries', endless),
      await json(two, 'POST', '/queries', endless),
      await json(three, 'POST', '/queries', endless),
    ];
    for (const long of longs) await jobWhen(two, long.id, isRunning, 50);
    const waiting = await json(one, 'POST', '/queries', { sql: 'select 6 * 7 as answer' });
    expect(waiting.status).toBe('queued');

    const stopped = one.stop('SIGTERM');
    // Once the replica has begun to drain, its queue has been given back: a worker freed now runs it elsewhere.
    await waitFor(
      () => one.logLines().some((line) => line.msg === 'shutting down'),
      (yes) => yes,
    );
    await json(two, 'POST', `/jobs/${longs[0]!.id}/cancel`);
    await stopped;
    // Not failed with its replica: still waiting, for whichever replica frees a worker first.
    expect((await json(two, 'GET', `/jobs/${waiting.id}`)).status).toBe('queued');
    await json(two, 'POST', `/jobs/${longs[1]!.id}/cancel`);
    const answered = await json(two, 'GET', `/queries/${waiting.id}?wait=10&format=inline`);
    expect(answered).toMatchObject({ status: 'succeeded', data: [{ answer: 42 }] });
    await json(two, 'POST', `/jobs/${longs[2]!.id}/cancel`);
    replicas[0] = await set.start(1);
  }, 60_000);
});
