import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_DEFAULTS } from '../../src/service/net/outbound.js';
import { startFakePostgres, type FakePostgres } from '../helpers/fake-postgres.js';
import { adminQuery, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { run, type Json, jobWhen } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

const json = (method: string, body?: object): RequestInit => ({
  method,
  headers: { 'Content-Type': 'application/json' },
  body: body ? JSON.stringify(body) : undefined,
});

async function finished(api: Harness, id: string): Promise<Json> {
  return jobWhen(async (path) => (await (await api.request(path)).json()) as Json, id);
}

/**
 * Finding 5: `"T"` and `t` synced, then every query of the organization answered 500; `public.x_y` and `x.y` landed
 * in one table; a source column `_synced_at` pushed lake's own aside; a table named `a/b` could not be queried; a
 * very long name failed with a path of the server.
 */
describe('names from a source are safe', () => {
  let api: Harness;
  let db: TestDatabase;
  let fake: FakePostgres;
  beforeAll(async () => {
    db = await createTestDatabase();
    await adminQuery(
      `CREATE TABLE public."T" (id int); INSERT INTO public."T" VALUES (1);
       CREATE TABLE public.t (id int); INSERT INTO public.t VALUES (2), (2);
       CREATE TABLE public.x_y (a int); INSERT INTO public.x_y VALUES (3);
       CREATE SCHEMA x; CREATE TABLE x.y (b int); INSERT INTO x.y VALUES (4), (4), (4);
       CREATE TABLE public.events (id int, _synced_at text, "A" int, a int); INSERT INTO public.events VALUES (5, 'theirs', 6, 7);
       CREATE TABLE public."a/b" (id int); INSERT INTO public."a/b" VALUES (8);
       GRANT USAGE ON SCHEMA x TO ${db.reader}; GRANT SELECT ON ALL TABLES IN SCHEMA public, x TO ${db.reader};`,
      db.database,
    );
    // Longer than the 128 characters a lake name takes, within the 256 a source's catalog may name (Snowflake's 255).
    fake = await startFakePostgres('rows', { names: [`${'long_name_'.repeat(20)}end`] });
    api = await inMemory.start({ services: { outbound: LOCAL_DEFAULTS } });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await db?.drop();
    await fake?.stop();
  });

  it('tables that collide after case folding or flattening land in distinct, documented names; columns too', async () => {
    const source = (await (
      await api.request(
        '/sources',
        json('POST', {
          connector: 'postgres',
          name: 'names',
          host: db.host,
          user: db.reader,
          config: { port: db.port, database: db.database, schemas: ['public', 'x'] },
        }),
      )
    ).json()) as Json;
    const lakeTables = Object.fromEntries(
      (source.tables as Json[]).map((t) => [`${t.schema}.${t.name}`, t.lake_table]),
    );
    expect(lakeTables).toMatchObject({
      'public.T': 'T',
      'public.t': 't_2',
      'public.x_y': 'x_y',
      'x.y': 'x_y_2',
      'public.a/b': 'a_b',
      'public.events': 'events',
    });
    const sync = (await (await api.request(`/sources/${source.id}/sync`, json('POST', {}))).json()) as Json;
    expect((await finished(api, sync.id)).status).toBe('succeeded');
    expect((await run(api, 'select count(*) as n from demo.orders')).status).toBe('succeeded');
    const counts = await run(
      api,
      `select (select count(*) from names."T") as big_t, (select count(*) from names.t_2) as small_t, (select count(*) from names.x_y) as x_y, (select count(*) from names.x_y_2) as x_dot_y, (select count(*) from names.a_b) as slash`,
    );
    expect(counts.data).toEqual([{ big_t: 1, small_t: 2, x_y: 1, x_dot_y: 3, slash: 1 }]);
    const events = await run(api, 'select * exclude (_synced_at) from names.events');
    expect(Object.keys(events.data[0])).toEqual(['id', '_synced_at_2', 'A', 'a_2']);
    expect(events.data).toEqual([{ id: 5, _synced_at_2: 'theirs', A: 6, a_2: 7 }]);
  });

  it('a catalog left with two names that differ only in case still answers every query, and a resync repairs it', async () => {
    const org = api.home.organization.id;
    // What syncs made before names were kept unique left behind: lake tables T and t, the second one t's.
    await api.services.lake.writeTable(org, 'names', 't', 'select 99 as id');
    await api.home.db.run("UPDATE source_table_state SET lake_table = 't' WHERE table_name = 't'");
    expect((await run(api, 'select count(*) as n from demo.orders')).status).toBe('succeeded');
    const source = ((await (await api.request('/sources')).json()) as Json).data.find((s: Json) => s.name === 'names');
    const sync = (await (await api.request(`/sources/${source.id}/sync`, json('POST', {}))).json()) as Json;
    expect((await finished(api, sync.id)).status).toBe('succeeded');
    const tables = ((await (await api.request('/catalog/names')).json()) as Json).data.map((t: Json) => t.name).sort();
    expect(tables).toEqual(['T', 'a_b', 'customers', 'events', 'orders', 't_2', 'x_y', 'x_y_2']);
    expect((await run(api, 'select id from names."T"')).data).toEqual([{ id: 1 }]);
  });

  it('a name longer than the catalog takes is cut with a digest, and its sync names no path of the server', async () => {
    const source = (await (
      await api.request(
        '/sources',
        json('POST', {
          connector: 'postgres',
          name: 'long',
          host: '127.0.0.1',
          user: 'u',
          password: 'p',
          config: { port: fake.port, database: 'd', sync_connections: 1 },
        }),
      )
    ).json()) as Json;
    const lakeTable = source.tables[0].lake_table as string;
    expect(lakeTable.length).toBeLessThanOrEqual(128);
    expect(lakeTable).toMatch(/^long_name_long_name_.*_[0-9a-f]{12}$/);
    const sync = (await (await api.request(`/sources/${source.id}/sync`, json('POST', {}))).json()) as Json;
    const job = await finished(api, sync.id);
    expect(job.status, JSON.stringify(job)).toBe('succeeded');
    expect((await run(api, `select count(*) as n from long."${lakeTable}"`)).data).toEqual([{ n: 2 }]);
  });
});
