import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_URL, adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { run, type Json } from '../helpers/queries.js';
import { startTransfers } from '../helpers/transfers.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * Tables are read over several connections at once, and still from one point in time: a writer that adds a row to
 * both tables in each of its transactions, all through the sync, must never leave the lake with more rows in one
 * table than in the other.
 */
describe('a sync over several connections is one consistent snapshot', () => {
  const db = useTestDatabase();
  let api: Harness;
  beforeAll(async () => {
    await adminQuery(
      `CREATE TABLE public.left_side (id bigint PRIMARY KEY, payload text);
       CREATE TABLE public.right_side (id bigint PRIMARY KEY, payload text);
       CREATE TABLE public.third (id bigint PRIMARY KEY);
       INSERT INTO public.left_side SELECT g, repeat('l', 60) FROM generate_series(1, 400000) g;
       INSERT INTO public.right_side SELECT g, repeat('r', 60) FROM generate_series(1, 400000) g;
       INSERT INTO public.third SELECT g FROM generate_series(1, 1000) g;
       GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${db.reader};`,
      db.database,
    );
    api = await inMemory.start();
  }, 60_000);
  afterAll(async () => {
    await api?.close();
  });

  it('reads tables in parallel (sync_connections), yet every table from the same snapshot', async () => {
    const source = (await (
      await api.request('/sources', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          connector: 'postgres',
          name: 'pair',
          config: { port: db.port, database: db.database, sync_connections: 3 },
          host: db.host,
          user: db.reader,
        }),
      })
    ).json()) as Json;
    expect(source.config.sync_connections).toBe(3);
    for (const bad of [0, 99, 1.5, '2']) {
      const refused = await api.request('/sources', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          connector: 'postgres',
          name: `bad ${String(bad)}`,
          config: { port: db.port, database: db.database, sync_connections: bad },
          host: db.host,
          user: db.reader,
        }),
      });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as Json).error).toMatchObject({
        code: 'invalid_source_parameters',
        param: 'config.sync_connections',
      });
    }
    await api.request(`/sources/${source.id}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        tables: source.tables.map((t: Json) => ({
          schema: 'public',
          name: t.name,
          enabled: ['left_side', 'right_side', 'third'].includes(t.name),
        })),
      }),
    });

    // The writer: one row into each table per transaction, as fast as it can, until the sync ends.
    const url = new URL(ADMIN_URL);
    url.pathname = `/${db.database}`;
    const writer = new pg.Client({ connectionString: url.toString() });
    await writer.connect();
    let writing = true;
    let written = 0;
    const writes = (async () => {
      for (let id = 1_000_001; writing; id++) {
        await writer.query(
          `BEGIN; INSERT INTO public.left_side VALUES (${id}, 'w'); INSERT INTO public.right_side VALUES (${id}, 'w'); COMMIT`,
        );
        written++;
      }
    })();

    const accepted = (await (
      await api.request(`/sources/${source.id}/sync`, {
        method: 'POST',
        body: '{}',
        headers: { 'Content-Type': 'application/json' },
      })
    ).json()) as Json;
    let job: Json = {};
    for (let i = 0; i < 600 && !['succeeded', 'failed'].includes(job.status); i++) {
      job = (await (await api.request(`/jobs/${accepted.id}`)).json()) as Json;
      await new Promise((r) => setTimeout(r, 50));
    }
    writing = false;
    await writes;
    await writer.end();
    expect(job.status, JSON.stringify(job)).toBe('succeeded');
    expect(written).toBeGreaterThan(10);

    const counts = await run(
      api,
      'select (select count(*) from lake.pair.left_side) as l, (select count(*) from lake.pair.right_side) as r, (select count(*) from lake.pair.third) as t',
    );
    expect(counts.data[0].l).toBe(counts.data[0].r);
    expect(counts.data[0].l).toBeGreaterThanOrEqual(400_000);
    expect(counts.data[0].t).toBe(1000);

    // The two large tables were extracted at the same time: each started before the other was committed.
    const events = await api.home.db.all<{ data: string }>(
      `SELECT data FROM job_events WHERE job_id = ? AND type = 'sync.progress' ORDER BY seq`,
      [accepted.id],
    );
    const phases = events.map((e) => JSON.parse(e.data) as { table: string; phase: string });
    const at = (table: string, phase: string): number =>
      phases.findIndex((p) => p.table === table && p.phase === phase);
    expect(at('public.left_side', 'extracting')).toBeLessThan(at('public.right_side', 'committed'));
    expect(at('public.right_side', 'extracting')).toBeLessThan(at('public.left_side', 'committed'));
  }, 60_000);
});

/**
 * A table large enough is read in block ranges over several connections at once. While it is read, a writer moves
 * amounts between rows (each update writes a new row version elsewhere in the table): from one snapshot, every row
 * arrives exactly once and the amounts still add up; a range from another point in time, or a row version read
 * twice or missed, would break either.
 */
describe('a large table is read in ranges side by side, from one snapshot', () => {
  const db = useTestDatabase();
  let api: Harness;
  const rows = 800_000;
  beforeAll(async () => {
    await adminQuery(
      `CREATE TABLE public.big (id bigint PRIMARY KEY, amount bigint NOT NULL, payload text);
       INSERT INTO public.big SELECT g, 100, repeat('p', 70) FROM generate_series(1, ${rows}) g;
       ANALYZE public.big;
       GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${db.reader};`,
      db.database,
    );
    api = await inMemory.start();
  }, 90_000);
  afterAll(async () => {
    await api?.close();
  });

  it('splits the read across connections and commits every row once', async () => {
    const size = Number((await adminQuery(`SELECT pg_relation_size('public.big') AS b`, db.database)).rows[0].b);
    // Two ranges need at least twice the smallest range (MIN_RANGE_BYTES, 32 MB).
    expect(size).toBeGreaterThan(64 << 20);
    const source = (await (
      await api.request('/sources', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          connector: 'postgres',
          name: 'ranged',
          config: { port: db.port, database: db.database, sync_connections: 2 },
          host: db.host,
          user: db.reader,
        }),
      })
    ).json()) as Json;
    await api.request(`/sources/${source.id}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        tables: source.tables.map((t: Json) => ({ schema: 'public', name: t.name, enabled: t.name === 'big' })),
      }),
    });

    const url = new URL(ADMIN_URL);
    url.pathname = `/${db.database}`;
    const writer = new pg.Client({ connectionString: url.toString() });
    const watcher = new pg.Client({ connectionString: url.toString() });
    await writer.connect();
    await watcher.connect();
    const writes = startTransfers(rows, async (from, to) => {
      await writer.query(
        `BEGIN; UPDATE public.big SET amount = amount - 1 WHERE id = ${from}; UPDATE public.big SET amount = amount + 1 WHERE id = ${to}; COMMIT`,
      );
    });
    // Which server processes run a range's COPY of the table at once.
    const readers = new Set<number>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const active = await watcher.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'COPY (SELECT%big%ctid%' AND state = 'active'`,
        );
        for (const r of active.rows) readers.add(r.pid);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();

    const accepted = (await (
      await api.request(`/sources/${source.id}/sync`, {
        method: 'POST',
        body: '{}',
        headers: { 'Content-Type': 'application/json' },
      })
    ).json()) as Json;
    let job: Json = {};
    for (let i = 0; i < 1200 && !['succeeded', 'failed'].includes(job.status); i++) {
      job = (await (await api.request(`/jobs/${accepted.id}`)).json()) as Json;
      await new Promise((r) => setTimeout(r, 50));
    }
    const moved = await writes.stop();
    watching = false;
    await watch;
    await writer.end();
    await watcher.end();
    expect(job.status, JSON.stringify(job)).toBe('succeeded');
    expect(moved).toBeGreaterThan(10);
    expect(readers.size).toBe(2);

    const lake = await run(
      api,
      'select count(*) as n, count(distinct id) as ids, sum(amount)::bigint as total from lake.ranged.big',
    );
    expect(lake.data[0]).toEqual({ n: rows, ids: rows, total: rows * 100 });
  }, 120_000);
});
