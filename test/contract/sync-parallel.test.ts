import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_URL, adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { run, type Json } from '../helpers/queries.js';
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
    const source = (await (await api.request('/sources', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ connector: 'postgres', name: 'pair', config: { port: db.port, database: db.database, sync_connections: 3 }, host: db.host, user: db.reader }),
    })).json()) as Json;
    expect(source.config.sync_connections).toBe(3);
    for (const bad of [0, 99, 1.5, '2']) {
      const refused = await api.request('/sources', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ connector: 'postgres', name: `bad ${String(bad)}`, config: { port: db.port, database: db.database, sync_connections: bad }, host: db.host, user: db.reader }),
      });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as Json).error).toMatchObject({ code: 'invalid_source_parameters', param: 'config.sync_connections' });
    }
    await api.request(`/sources/${source.id}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ tables: source.tables.map((t: Json) => ({ schema: 'public', name: t.name, enabled: ['left_side', 'right_side', 'third'].includes(t.name) })) }),
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
        await writer.query(`BEGIN; INSERT INTO public.left_side VALUES (${id}, 'w'); INSERT INTO public.right_side VALUES (${id}, 'w'); COMMIT`);
        written++;
      }
    })();

    const accepted = (await (await api.request(`/sources/${source.id}/sync`, { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } })).json()) as Json;
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

    const counts = await run(api, 'select (select count(*) from lake.pair.left_side) as l, (select count(*) from lake.pair.right_side) as r, (select count(*) from lake.pair.third) as t');
    expect(counts.data[0].l).toBe(counts.data[0].r);
    expect(counts.data[0].l).toBeGreaterThanOrEqual(400_000);
    expect(counts.data[0].t).toBe(1000);

    // The two large tables were extracted at the same time: each started before the other was committed.
    const events = api.home.db.prepare(`SELECT data FROM job_events WHERE job_id = ? AND type = 'sync.progress' ORDER BY seq`).all(accepted.id) as { data: string }[];
    const phases = events.map((e) => JSON.parse(e.data) as { table: string; phase: string });
    const at = (table: string, phase: string): number => phases.findIndex((p) => p.table === table && p.phase === phase);
    expect(at('public.left_side', 'extracting')).toBeLessThan(at('public.right_side', 'committed'));
    expect(at('public.right_side', 'extracting')).toBeLessThan(at('public.left_side', 'committed'));
  }, 60_000);
});
