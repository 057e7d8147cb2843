import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobWhen, jsonClient, run, syncEnded, syncSucceeded, type Json } from '../helpers/queries.js';
import { LOGICAL_REPLICATION, startPrivatePostgres, type PrivatePostgres } from '../helpers/postgres.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * citext, two-dimensional arrays, whole numbers wider than 38 digits and numerics holding NaN through change data
 * capture: the changes apply with the types the copy gave the table, and one that no longer fits them fails the
 * table with the full refresh to run, after which the table is typed by its values again.
 */
describe('cdc of value-typed columns', () => {
  let server: PrivatePostgres;
  let source: pg.Client;
  let api: Harness;
  let sourceId: string;
  beforeAll(async () => {
    server = await startPrivatePostgres(LOGICAL_REPLICATION);
    source = new pg.Client({ connectionString: server.url });
    await source.connect();
    await source.query(
      `CREATE EXTENSION citext;
       CREATE TABLE public.typed (id int PRIMARY KEY, ci citext, m int[], w numeric(45,0), n numeric);
       INSERT INTO public.typed VALUES (1, 'Ada', '{{1,2},{3,4}}', 123456789012345678901234567890123456789012345, 'NaN'),
         (2, 'BOB', '{{5,NULL}}', -1, 1.5), (3, 'Émile', NULL, NULL, 'Infinity');`,
    );
    api = await inMemory.start();
    const call = jsonClient(api);
    const created = await call('POST', '/sources', {
      connector: 'postgres',
      name: 'changes',
      config: { port: Number(new URL(server.url).port), database: 'postgres' },
      host: 'localhost',
      user: 'postgres',
    });
    sourceId = created.id as string;
    await call('PATCH', `/sources/${sourceId}`, { tables: [{ schema: 'public', name: 'typed', mode: 'cdc' }] });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await source?.end();
    await server?.stop();
  });

  async function expectSameAnswers(): Promise<void> {
    const want = (
      await source.query(
        `SELECT string_agg(id::text, ';' ORDER BY ci, id) AS o, count(*) FILTER (WHERE ci = 'ada') AS ada,
           sum(m[1][2]) AS m12, max(w)::text AS w, count(*) FILTER (WHERE n = 'NaN') AS nan, count(*) AS n
         FROM public.typed`,
      )
    ).rows[0] as Json;
    const lake = (await run(
      api,
      `select string_agg(id::varchar, ';' order by ci, id) as o, count(*) filter (where ci = 'ada') as ada,
         sum(m[1][2]) as m12, max(w)::varchar as w, count(*) filter (where n = 'NaN') as nan, count(*) as n
       from lake.changes.typed`,
    )) as Json;
    expect(lake.status, JSON.stringify(lake.error)).toBe('succeeded');
    const asText = (row: Json) => Object.values(row).map((v) => (v === null ? null : String(v)));
    expect(asText(lake.data[0] as Json)).toEqual(asText(want));
  }

  it('applies changes with the table’s types, and asks for a full refresh when one no longer fits', async () => {
    await syncSucceeded(api, sourceId);
    await expectSameAnswers();

    await source.query(
      `UPDATE public.typed SET ci = 'ADA', m = '{{7,8}}', w = w + 1, n = -3 WHERE id = 1;
       INSERT INTO public.typed VALUES (4, 'ada2', '{{9,10},{11,12}}', 7, 'NaN');
       DELETE FROM public.typed WHERE id = 2;`,
    );
    await syncSucceeded(api, sourceId);
    await expectSameAnswers();

    await source.query(`UPDATE public.typed SET m = '{1}' WHERE id = 3`);
    const failed = await syncEnded(api, sourceId);
    expect(failed.status).toBe('failed');
    const latest = (await jsonClient(api)('GET', `/sources/${sourceId}`)).latest_sync as Json;
    const table = (latest.tables as Json[]).find((t) => t.table === 'public.typed') as Json;
    expect(table.phase).toBe('failed');
    expect(table.error).toMatch(/does not fit its column's lake type; run lake sync start --full-refresh/);

    const call = jsonClient(api);
    const refresh = await call('POST', `/sources/${sourceId}/sync`, { full_refresh: true });
    expect((await jobWhen((path) => call('GET', path), refresh.id as string)).status).toBe('succeeded');
    // Arrays of one and two dimensions now: JSON, as PostgreSQL's array_to_json makes them.
    const want = (await source.query('SELECT array_to_json(m)::text AS m FROM public.typed ORDER BY id')).rows;
    const typed = (await run(
      api,
      'select m::varchar as m, typeof(m) as t from lake.changes.typed order by id',
    )) as Json;
    expect(typed.data.map((r: Json) => ({ m: r.m }))).toEqual(want);
    expect(typed.data[0].t).toBe('JSON');
  });
});
