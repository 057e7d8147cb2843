import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JobPool } from '../../src/service/jobs/job-pool.js';
import { JobRuntime } from '../../src/service/jobs/job-runtime.js';
import { JobStore, type JobKind } from '../../src/service/jobs/job-store.js';
import { Scheduler } from '../../src/service/jobs/scheduler.js';
import { SendStore, type SendRecord } from '../../src/service/sends/send-store.js';
import { applyMigrations } from '../../src/service/store/migrate.js';
import { MIGRATIONS } from '../../src/service/store/migrations.js';
import type { MetadataDb } from '../../src/service/store/metadata-db.js';
import { PostgresMetadataDb } from '../../src/service/store/postgres-db.js';
import { SqliteMetadataDb } from '../../src/service/store/sqlite-db.js';
import { manualClock } from '../helpers/clock.js';
import { createMetadataDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * The job runtime's rules on the real stores, with a clock the test moves: no child process, no engine, no SQL
 * that burns CPU. Two "replicas" are two runtimes, each with its own connection on PostgreSQL (so a cancel
 * between them travels as NOTIFY), and one database on SQLite (which serves one process).
 */
interface Replicas {
  stores: [MetadataDb, MetadataDb];
}

const opened: MetadataDb[] = [];
const dropped: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const db of opened.splice(0)) await db.close();
  for (const drop of dropped) await drop();
});

const KINDS: { name: string; open(): Promise<Replicas> }[] = [
  {
    name: 'sqlite',
    async open() {
      const db = SqliteMetadataDb.open(join(tempDir('lake-runtime'), 'm.sqlite'));
      opened.push(db);
      await applyMigrations(db, MIGRATIONS);
      return { stores: [db, db] };
    },
  },
  {
    name: 'postgres',
    async open() {
      const database = await createMetadataDatabase();
      dropped.push(database.drop);
      const first = PostgresMetadataDb.open(database.url);
      const second = PostgresMetadataDb.open(database.url);
      opened.push(first, second);
      await applyMigrations(first, MIGRATIONS);
      return { stores: [first, second] };
    },
  },
];

const ORG = 'org_runtime';
let jobCount = 0;

describe.each(KINDS)('job runtime ($name)', (kind) => {
  /** Two runtimes sharing a store, a lease of `leaseMs` on one clock the test moves. */
  async function setup(leaseMs = 30_000) {
    const { stores } = await kind.open();
    const clock = manualClock();
    await stores[0].run('INSERT INTO organizations (id, name, table_permissions, created) VALUES (?, ?, 0, 0)', [
      ORG,
      'runtime',
    ]);
    const failures: string[] = [];
    const runtime = (db: MetadataDb): JobRuntime =>
      new JobRuntime(new JobStore(db, clock), { leaseMs }, (work, error) => failures.push(`${work}: ${String(error)}`));
    const [a, b] = [runtime(stores[0]), runtime(stores[1])];
    const queued = async (jobKind: JobKind = 'sync', lease?: { owner: string; expiresMs: number }) => {
      const id = `job_${++jobCount}`;
      await a.store.create({
        id,
        organizationId: ORG,
        kind: jobKind,
        principalId: 'usr',
        credentialId: 'cred',
        ...(lease ? { lease, queued: true } : {}),
      });
      return id;
    };
    const running = async () => {
      const id = `job_${++jobCount}`;
      await a.store.create({
        id,
        organizationId: ORG,
        kind: 'send',
        principalId: 'usr',
        credentialId: 'cred',
        lease: a.lease(),
      });
      return id;
    };
    return { stores, clock, a, b, queued, running, failures };
  }

  it('two replicas claiming one queued job: exactly one takes it, and no one takes it again', async () => {
    const { a, b, queued } = await setup();
    const id = await queued();
    const [first, second] = await Promise.all([a.claimNext('sync'), b.claimNext('sync')]);
    expect([first?.id, second?.id].filter(Boolean)).toEqual([id]);
    expect(await a.claim(id)).toBe(false);
    const holder = await a.store.holder(id);
    expect(holder?.status).toBe('running');
    expect(holder?.owner).toBe(first ? a.workerId : b.workerId);
  });

  it("a job's error message is kept to 16,000 characters, in the job and in its last event, whatever wrote it", async () => {
    const { a, running } = await setup();
    const id = await running();
    // Ended by its holder (true): no stop notice goes to other tests' runtimes on the shared store.
    expect(
      await a.store.finish(id, 'failed', { code: 'delivery_failed', message: `${'x'.repeat(99_999)}😀` }, true),
    ).toBe(true);
    const job = await a.store.getById(id);
    expect(job?.errorMessage).toBe(`${'x'.repeat(16_000)}…`);
    const events = await a.store.events(id, 0);
    expect(events.at(-1)?.data).toMatchObject({ error: { code: 'delivery_failed', message: job?.errorMessage } });
    // A cut that would leave half of a character's surrogate pair leaves the pair out.
    const pair = await running();
    await a.store.finish(pair, 'failed', { code: 'x', message: `${'y'.repeat(15_999)}😀${'y'.repeat(100)}` }, true);
    expect((await a.store.getById(pair))?.errorMessage).toBe(`${'y'.repeat(15_999)}…`);
  });

  it('a lease is renewed while the job is held and expires (worker_lost) once it is not', async () => {
    const { stores, a, b, clock, running } = await setup(300);
    const id = await running();
    const release = a.hold(id, () => undefined);
    const expiry = () => leaseOf(stores[0], id);
    const first = (await expiry()) as number;
    clock.advance(250);
    // A round renews it from the moved clock (rounds run every third of the lease).
    await waitFor(expiry, (expires) => expires !== undefined && expires > first, 3000);
    clock.advance(250);
    expect(await b.store.expireLeases()).toBe(0);
    release();
    clock.advance(400);
    expect(await b.store.expireLeases()).toBe(1);
    expect(await a.store.getById(id)).toMatchObject({ status: 'failed', errorCode: 'worker_lost' });
  });

  it('a cancel asked while a job is starting reaches its run at once, not at the next lease round', async () => {
    const { a, b, running } = await setup();
    const id = await running();
    expect(await b.store.requestCancel(id)).toBe(true);
    // The cancel came before the run listened for it; a lease round (every second here) would come too late.
    const started = Date.now();
    let stoppedAfter = -1;
    await a.run(id, 'send', ORG, async (signal) => {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      stoppedAfter = Date.now() - started;
      await a.store.finish(id, 'cancelled', { code: 'cancelled', message: 'cancelled' });
    });
    expect(stoppedAfter).toBeGreaterThanOrEqual(0);
    expect(stoppedAfter).toBeLessThan(500);
    expect((await a.store.getById(id))?.status).toBe('cancelled');
  });

  it('a cancel asked on another replica while the job runs stops it within a second', async () => {
    const { a, b, running } = await setup();
    const id = await running();
    const cancelledAt: number[] = [];
    let started = false;
    const done = a.run(id, 'send', ORG, async (signal) => {
      started = true;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      cancelledAt.push(Date.now());
      await a.store.finish(id, 'cancelled', { code: 'cancelled', message: 'cancelled' });
    });
    // Once the work has started, the runtime is listening for the job's events.
    await waitFor(
      () => started,
      (yes) => yes,
    );
    const asked = Date.now();
    await b.store.requestCancel(id);
    await done;
    // Through the job's event (NOTIFY between replicas), not the lease round's look at the flag a second later.
    expect((cancelledAt[0] as number) - asked).toBeLessThan(400);
  });

  it('a holder is not sent to the store by the events it writes itself; an end by another process reaches it at once', async () => {
    const { a, b, running } = await setup();
    const id = await running();
    let looks = 0;
    const toStop = a.store.toStop.bind(a.store);
    a.store.toStop = async (ids) => {
      looks++;
      return toStop(ids);
    };
    let started = false;
    const endedAt: number[] = [];
    const done = a.run(id, 'send', ORG, async (signal) => {
      started = true;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      endedAt.push(Date.now());
    });
    await waitFor(
      () => started,
      (yes) => yes,
    );
    // The look when it was first held (a cancel may have come while it was claimed).
    await waitFor(
      () => looks,
      (n) => n >= 1,
    );
    // The holder hears its own events as every process does; counted by a listener that hears them after it.
    let heard = 0;
    const unlisten = a.store.onEvent(id, () => heard++);
    // The store's notices flow once its listening connection is up, which it opens at its own pace (on a loaded
    // machine, after the first events: they were lost, the wait below ran out, and the holder's durable look for
    // stops, once a second, was counted instead). One event heard says it is up.
    await waitFor(
      async () => {
        if (heard === 0) await a.store.appendEvent(id, 'send.progress', { rows: -1 });
        return heard;
      },
      (n) => n >= 1,
      { intervalMs: 200 },
    );
    const before = looks;
    heard = 0;
    for (let i = 0; i < 5; i++) await a.store.appendEvent(id, 'send.progress', { rows: i });
    await waitFor(
      () => heard,
      (n) => n >= 5,
    );
    unlisten();
    expect(heard).toBeGreaterThanOrEqual(5);
    // Five events, and no look for any of them (the durable look, once a second, may fall in the window once).
    expect(looks - before).toBeLessThanOrEqual(1);
    // Given up by another replica (as a lost lease is): the holder stops it through the notice, not a lease round.
    const asked = Date.now();
    expect(await b.store.finish(id, 'failed', { code: 'worker_lost', message: 'lost' })).toBe(true);
    await done;
    expect((endedAt[0] as number) - asked).toBeLessThan(400);
  });

  it('a drain hands queued work back to the shared queue, where another replica claims it', async () => {
    const { a, b, queued } = await setup();
    const id = await queued('query', a.lease());
    // Held in a's own queue: a does not claim it from the shared queue, and b may (a has no worker for it).
    expect(await a.claimNext('query', { notHeldHere: true })).toBeUndefined();
    expect(await a.handBack([id])).toEqual([id]);
    expect((await a.store.holder(id))?.owner).toBeNull();
    expect(await b.claimNext('query')).toEqual({ id, organizationId: ORG });
    // Handed back once only: b's running job is not a's to give.
    expect(await a.handBack([id])).toEqual([]);
  });

  it('a drain gives runs their grace, then aborts the rest; a pool stops taking work', async () => {
    const { a, queued } = await setup();
    const ran: string[] = [];
    const pool = new JobPool(a, 'sync', { concurrency: 1, perOrganization: 1 }, async (id, _org, signal) => {
      ran.push(id);
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      await a.store.finish(id, 'cancelled', { code: 'cancelled', message: 'drained' });
    });
    const [first, second] = [await queued(), await queued()];
    pool.offer(first, ORG);
    pool.offer(second, ORG);
    await waitFor(
      () => ran.length,
      (n) => n === 1,
    );
    const started = Date.now();
    await pool.close(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(ran).toEqual([first]);
    expect((await a.store.getById(first))?.status).toBe('cancelled');
    // The second waited here, unclaimed: it stays queued for another process.
    expect((await a.store.getById(second))?.status).toBe('queued');
  });

  it('one scheduled tick is claimed by one of two schedulers', async () => {
    const { stores, clock, a, b } = await setup();
    const now = Math.floor(clock.now() / 1000);
    const send: SendRecord = {
      id: `snd_${++jobCount}`,
      organizationId: ORG,
      name: 'hourly',
      sql: 'select 1',
      destination: { type: 'webhook', url: 'https://example.com/hook', format: 'json', batch_size: 100 },
      secrets: '',
      secretsSet: [],
      everyMinutes: 60,
      paused: false,
      credentialId: 'cred',
      principalId: 'usr',
      nextRun: now + 3600,
      created: now,
      updated: now,
    };
    await new SendStore(stores[0]).insert(send);
    const scheduler = (db: MetadataDb, runtime: JobRuntime) => {
      const store = new SendStore(db);
      return new Scheduler<SendRecord, string>(
        'send',
        {
          due: (at) => store.due(at),
          claimTick: (item, at) => store.claimTick(item.id, item.nextRun as number, at + 3600),
          start: async () => runtime.workerId,
        },
        clock,
      );
    };
    const [one, two] = [scheduler(stores[0], a), scheduler(stores[1], b)];
    expect([...(await one.runDue()), ...(await two.runDue())]).toEqual([]);
    clock.advance(3600_000);
    const ticks = await Promise.all([one.runDue(), two.runDue()]);
    expect(ticks.flat()).toHaveLength(1);
    // The next tick is an hour on, and claimed once again.
    clock.advance(3600_000);
    expect((await Promise.all([two.runDue(), one.runDue()])).flat()).toHaveLength(1);
  });
});

async function leaseOf(db: MetadataDb, id: string): Promise<number | undefined> {
  const row = await db.get<{ lease_expires: number | null }>('SELECT lease_expires FROM jobs WHERE id = ?', [id]);
  return row?.lease_expires ?? undefined;
}
