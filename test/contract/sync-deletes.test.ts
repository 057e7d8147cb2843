import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MERGES } from '../../src/service/storage/lake.js';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { expectError, jsonClient, run, syncEnded, syncSucceeded, type Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * Delete detection on incremental tables (`detect_deletes`): each sync also reads the source's primary keys and
 * deletes the lake rows whose key is gone, as DuckLake delete files, through merges and compaction alike; a table
 * without it keeps the rows the source deleted, as an incremental sync always did.
 */
describe('incremental syncs that detect deletes', () => {
  const db = useTestDatabase();
  let api: Harness;
  let sourceId: string;
  beforeAll(async () => {
    await adminQuery(
      `CREATE TABLE public.items (id int PRIMARY KEY, v text, changed timestamptz NOT NULL);
       INSERT INTO public.items SELECT g, 'v' || g, '2024-01-01'::timestamptz + g * interval '1 minute' FROM generate_series(1, 1000) g;
       CREATE TABLE public.kept (id int PRIMARY KEY, v text, changed timestamptz NOT NULL);
       INSERT INTO public.kept SELECT g, 'k' || g, '2024-01-01'::timestamptz + g * interval '1 minute' FROM generate_series(1, 100) g;
       CREATE TABLE public.pairs (a int, b text, v text, changed timestamptz NOT NULL, PRIMARY KEY (a, b));
       INSERT INTO public.pairs SELECT g % 7, 'b' || (g / 7), 'p' || g, '2024-01-01'::timestamptz + g * interval '1 minute' FROM generate_series(1, 300) g;
       GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${db.reader};`,
      db.database,
    );
    api = await inMemory.start({ services: { gcSettings: { retentionSeconds: 0, intervalMs: 600_000 } } });
    const source = await postgresSource('deletes');
    sourceId = source.id as string;
    const incremental = { mode: 'incremental', cursor_column: 'changed' };
    await json('PATCH', `/sources/${sourceId}`, {
      tables: source.tables.map((t: Json) =>
        ['items', 'pairs'].includes(t.name)
          ? { schema: 'public', name: t.name, ...incremental, detect_deletes: true }
          : t.name === 'kept'
            ? { schema: 'public', name: t.name, ...incremental }
            : { schema: 'public', name: t.name, enabled: false },
      ),
    });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
  });

  const json = (method: string, path: string, body?: object): Promise<Json> => jsonClient(api)(method, path, body);
  /** A source of the test database, read as its reader, named `name`. */
  const postgresSource = (name: string): Promise<Json> =>
    json('POST', '/sources', {
      connector: 'postgres',
      name,
      config: { port: db.port, database: db.database },
      host: db.host,
      user: db.reader,
    });
  /** A sync that succeeded, as its sync object (each table's phase, counts and deletes). */
  const sync = async (): Promise<Json> => {
    const job = await syncSucceeded(api, sourceId);
    return json('GET', `/sources/${sourceId}`).then((s) => {
      expect(s.latest_sync.id).toBe(job.id);
      return s.latest_sync as Json;
    });
  };
  const tableOf = (done: Json, name: string): Json =>
    (done.tables as Json[]).find((t) => t.table === `public.${name}`) as Json;
  const source = (sql: string): Promise<unknown> => adminQuery(sql, db.database);

  /** The lake table's rows against the source's, both ways (EXCEPT ALL), and the catalog's count. */
  async function expectEqual(table: string, columns = 'id, v'): Promise<void> {
    const fromSource = (await adminQuery(`SELECT ${columns} FROM public.${table} ORDER BY ${columns}`, db.database))
      .rows;
    const lake = await run(api, `select ${columns} from lake.deletes.${table} order by ${columns}`);
    let rows = lake.data as Json[];
    for (let cursor = lake.next_cursor; cursor;) {
      const page = await json('GET', `/queries/${lake.id}?format=inline&limit=1000&starting_after=${cursor}`);
      rows = [...rows, ...(page.data as Json[])];
      cursor = page.next_cursor;
    }
    expect(rows).toEqual(fromSource);
    const counted = await api.services.lake.tables.get(api.home.organization.id, 'deletes', table);
    expect(counted?.snapshot.rowCount).toBe(fromSource.length);
  }

  it('removes the rows the source deleted, beside its inserts and updates, and counts them', async () => {
    await sync();
    await expectEqual('items');
    await source(
      `DELETE FROM public.items WHERE id % 50 = 0;
       UPDATE public.items SET v = 'changed', changed = now() WHERE id % 50 = 1;
       INSERT INTO public.items SELECT g, 'new', now() FROM generate_series(1001, 1010) g;
       DELETE FROM public.kept WHERE id <= 10;`,
    );
    const done = await sync();
    expect(tableOf(done, 'items')).toMatchObject({ phase: 'committed', deleted: 20, completed: 990 });
    await expectEqual('items');
    // Without detect_deletes the deleted rows stay, as incremental syncs always kept them.
    expect(tableOf(done, 'kept').deleted).toBeUndefined();
    const kept = await run(api, 'select count(*) as n from lake.deletes.kept');
    expect(kept.data).toEqual([{ n: 100 }]);
  });

  it('a sync with deletes and no changed row deletes them; one with neither deletes none', async () => {
    await source(`DELETE FROM public.items WHERE id BETWEEN 102 AND 106`);
    const done = await sync();
    expect(tableOf(done, 'items').deleted).toBe(5);
    await expectEqual('items');
    expect(tableOf(await sync(), 'items').deleted).toBe(0);
    await expectEqual('items');
  });

  it('a key deleted and inserted again comes back; composite keys are compared whole', async () => {
    await source(`DELETE FROM public.items WHERE id = 7`);
    await sync();
    await source(`INSERT INTO public.items VALUES (7, 'again', now())`);
    await sync();
    await expectEqual('items');
    await sync();
    await expectEqual('pairs', 'a, b, v');
    // (1, 'b0') goes; (1, 'b1') and (2, 'b0') stay.
    await source(`DELETE FROM public.pairs WHERE a = 1 AND b = 'b0'`);
    expect(tableOf(await sync(), 'pairs').deleted).toBe(1);
    await expectEqual('pairs', 'a, b, v');
  });

  it('keeps removing deletes through as many merges as compaction allows, and in the compaction itself', async () => {
    const layers: number[] = [];
    for (let round = 0; round <= MAX_MERGES + 1; round++) {
      await source(
        `DELETE FROM public.items WHERE id = (SELECT min(id) FROM public.items WHERE id > 200);
         UPDATE public.items SET v = 'round ${round}', changed = now() WHERE id = 300 + ${round};`,
      );
      expect(tableOf(await sync(), 'items').deleted).toBe(1);
      await expectEqual('items');
      const table = await api.services.lake.tables.get(api.home.organization.id, 'deletes', 'items');
      layers.push(table?.snapshot.layers ?? 0);
    }
    // The rounds went past MAX_MERGES merges: one of them compacted the table (back to one layer).
    expect(layers).toContain(1);
  });

  it('is for incremental tables: refused on a full one, and dropped when a table goes back to full', async () => {
    await expectError(
      await api.request(`/sources/${sourceId}`, {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ tables: [{ schema: 'public', name: 'customers', detect_deletes: true }] }),
      }),
      400,
      'invalid_source_parameters',
      'tables[0].detect_deletes',
    );
    const full = await json('PATCH', `/sources/${sourceId}`, {
      tables: [{ schema: 'public', name: 'pairs', mode: 'full' }],
    });
    expect((full.tables as Json[]).find((t) => t.name === 'pairs')).toMatchObject({
      mode: 'full',
      detect_deletes: false,
    });
  });

  it('fails a table whose key column is gone at the source with what to do, and takes the key set again', async () => {
    await source(
      `CREATE TABLE public.rekeyed (id int PRIMARY KEY, code int NOT NULL, v text, changed timestamptz NOT NULL);
       INSERT INTO public.rekeyed SELECT g, 100 + g, 'r' || g, '2024-01-01' FROM generate_series(1, 5) g;
       GRANT SELECT ON public.rekeyed TO ${db.reader};`,
    );
    const created = await postgresSource('rekeyed');
    const id = created.id as string;
    await json('PATCH', `/sources/${id}`, {
      tables: (created.tables as Json[]).map((t) =>
        t.name === 'rekeyed'
          ? { schema: 'public', name: 'rekeyed', mode: 'incremental', cursor_column: 'changed', detect_deletes: true }
          : { schema: 'public', name: t.name, enabled: false },
      ),
    });
    await syncSucceeded(api, id);
    await source(`ALTER TABLE public.rekeyed DROP COLUMN id; ALTER TABLE public.rekeyed ADD PRIMARY KEY (code);`);
    await syncEnded(api, id);
    const failed = ((await json('GET', `/sources/${id}`)).latest_sync.tables as Json[])[0] as Json;
    expect(failed).toMatchObject({
      phase: 'failed',
      error: expect.stringMatching(/^its primary key names a column the table does not have \(id\); set the key again/),
    });
    await json('PATCH', `/sources/${id}`, { tables: [{ schema: 'public', name: 'rekeyed', primary_key: ['code'] }] });
    await syncSucceeded(api, id);
    await source(
      `UPDATE public.rekeyed SET v = 'x', changed = '2024-02-01' WHERE code = 102; DELETE FROM public.rekeyed WHERE code = 103;`,
    );
    await syncSucceeded(api, id);
    const rows = await run(api, 'select code, v from lake.rekeyed.rekeyed order by code');
    expect(rows.data).toEqual([
      { code: 101, v: 'r1' },
      { code: 102, v: 'x' },
      { code: 104, v: 'r4' },
      { code: 105, v: 'r5' },
    ]);
  });
});

/**
 * Soft deletes (`config.deletes: "soft"`): a row the source deleted stays in the lake, its `_deleted_at` set to the
 * sync's time, once; a key inserted again is live again; turning soft deletes off reads the table whole.
 */
describe('soft deletes', () => {
  const db = useTestDatabase();
  let api: Harness;
  let sourceId: string;
  beforeAll(async () => {
    await adminQuery(
      `CREATE TABLE public.soft_items (id int PRIMARY KEY, v text, changed timestamptz NOT NULL);
       INSERT INTO public.soft_items SELECT g, 'v' || g, '2024-01-01'::timestamptz + g * interval '1 minute' FROM generate_series(1, 500) g;
       GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${db.reader};`,
      db.database,
    );
    api = await inMemory.start();
    const created = await request('POST', '/sources', {
      connector: 'postgres',
      name: 'softly',
      config: { port: db.port, database: db.database, deletes: 'soft' },
      host: db.host,
      user: db.reader,
    });
    sourceId = created.id as string;
    await request('PATCH', `/sources/${sourceId}`, {
      tables: (created.tables as Json[]).map((t) =>
        t.name === 'soft_items'
          ? { schema: 'public', name: t.name, mode: 'incremental', cursor_column: 'changed', detect_deletes: true }
          : { schema: 'public', name: t.name, enabled: false },
      ),
    });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
  });

  const request = (method: string, path: string, body?: object): Promise<Json> => jsonClient(api)(method, path, body);
  const sync = async (): Promise<Json> => {
    const job = await syncSucceeded(api, sourceId);
    const source = await request('GET', `/sources/${sourceId}`);
    expect(source.latest_sync.id).toBe(job.id);
    return (source.latest_sync.tables as Json[]).find((t) => t.table === 'public.soft_items') as Json;
  };
  const change = (sql: string): Promise<unknown> => adminQuery(sql, db.database);
  const lake = async (sql: string): Promise<Json[]> => (await run(api, sql)).data as Json[];

  /** The live rows (no `_deleted_at`) are the source's rows; every marked row is one the source lacks. */
  async function expectLiveRowsEqual(): Promise<void> {
    const source = (await adminQuery('SELECT id, v FROM public.soft_items ORDER BY id', db.database)).rows;
    const live = await lake(
      'select count(*) as n, sum(id)::integer as ids, count(distinct v) as vs from lake.softly.soft_items where _deleted_at is null',
    );
    expect(live).toEqual([
      {
        n: source.length,
        ids: source.reduce((sum, r) => sum + Number(r.id), 0),
        vs: new Set(source.map((r) => r.v)).size,
      },
    ]);
    const duplicates = await lake('select id from lake.softly.soft_items group by id having count(*) > 1');
    expect(duplicates).toEqual([]);
  }

  it('keeps a deleted row, marked with the sync that saw it gone, and marks it only once', async () => {
    await sync();
    await change(`DELETE FROM public.soft_items WHERE id IN (10, 20, 30)`);
    const table = await sync();
    expect(table.deleted).toBe(3);
    await expectLiveRowsEqual();
    const marked = await lake(
      'select id, v, _deleted_at is not null as marked from lake.softly.soft_items where _deleted_at is not null order by id',
    );
    expect(marked).toEqual([
      { id: 10, v: 'v10', marked: true },
      { id: 20, v: 'v20', marked: true },
      { id: 30, v: 'v30', marked: true },
    ]);
    const firstMark = await lake('select _deleted_at::varchar as at from lake.softly.soft_items where id = 10');
    expect((await sync()).deleted).toBe(0);
    expect(await lake('select _deleted_at::varchar as at from lake.softly.soft_items where id = 10')).toEqual(
      firstMark,
    );
    await expectLiveRowsEqual();
  });

  it('a key inserted again is live again, once', async () => {
    await change(`INSERT INTO public.soft_items VALUES (20, 'back', now())`);
    await sync();
    expect(await lake('select v, _deleted_at from lake.softly.soft_items where id = 20')).toEqual([
      { v: 'back', _deleted_at: null },
    ]);
    await expectLiveRowsEqual();
  });

  it('marks keep through compaction', async () => {
    for (let round = 0; round <= MAX_MERGES + 1; round++) {
      await change(`DELETE FROM public.soft_items WHERE id = ${100 + round}`);
      expect((await sync()).deleted).toBe(1);
    }
    await expectLiveRowsEqual();
    const marked = await lake(
      'select count(*) as n from lake.softly.soft_items where _deleted_at is not null and id between 100 and 120',
    );
    expect(marked).toEqual([{ n: MAX_MERGES + 2 }]);
  });

  it('turned off, the next sync reads the table whole: deleted rows and the column are gone', async () => {
    await request('PATCH', `/sources/${sourceId}`, { config: { deletes: 'hard' } });
    await sync();
    const columns = (await request('GET', '/catalog/softly/soft_items')).columns as Json[];
    expect(columns.map((c) => c.name)).not.toContain('_deleted_at');
    const source = (await adminQuery('SELECT count(*)::int AS n FROM public.soft_items', db.database)).rows;
    expect(await lake('select count(*) as n from lake.softly.soft_items')).toEqual(source);
  });
});

/**
 * An unconstrained `numeric` column is typed by the values a sync reads (DECIMAL(38, their largest scale)). Changed
 * rows with a smaller scale must merge into the table as it is typed: typed otherwise, the commit gave the column
 * new ids and every older file read NULL for it.
 */
describe('incremental merges of numeric columns without declared precision', () => {
  const db = useTestDatabase();
  let api: Harness;
  let sourceId: string;
  beforeAll(async () => {
    await adminQuery(
      `CREATE TABLE public.prices (id int PRIMARY KEY, amount numeric, changed timestamptz NOT NULL);
       INSERT INTO public.prices SELECT g, g + 0.25, '2024-01-01'::timestamptz + g * interval '1 minute' FROM generate_series(1, 20) g;
       GRANT SELECT ON public.prices TO ${db.reader};`,
      db.database,
    );
    api = await inMemory.start();
    const call = jsonClient(api);
    const created = await call('POST', '/sources', {
      connector: 'postgres',
      name: 'numbers',
      config: { port: db.port, database: db.database },
      host: db.host,
      user: db.reader,
    });
    sourceId = created.id as string;
    await call('PATCH', `/sources/${sourceId}`, {
      tables: (created.tables as Json[]).map((t) =>
        t.name === 'prices'
          ? { schema: 'public', name: t.name, mode: 'incremental', cursor_column: 'changed' }
          : { schema: 'public', name: t.name, enabled: false },
      ),
    });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
  });

  const amounts = async (): Promise<unknown[]> =>
    ((await run(api, 'select id, amount::varchar as amount from lake.numbers.prices order by id')).data as Json[]).map(
      (r) => `${r.id}=${r.amount}`,
    );
  const sourceAmounts = async (): Promise<unknown[]> =>
    (await adminQuery('SELECT id, amount FROM public.prices ORDER BY id', db.database)).rows.map(
      (r) => `${r.id}=${Number(r.amount).toFixed(2)}`,
    );

  it('keeps the older rows values when the changed rows have a smaller scale, and retypes on a larger one', async () => {
    await syncSucceeded(api, sourceId);
    expect(await amounts()).toEqual(await sourceAmounts());
    await adminQuery(`UPDATE public.prices SET amount = 7.5, changed = now() WHERE id = 3`, db.database);
    await syncSucceeded(api, sourceId);
    expect(await amounts()).toEqual(await sourceAmounts());
    // A larger scale than the table's: the table is read whole and typed again, nothing lost.
    await adminQuery(`UPDATE public.prices SET amount = 1.125, changed = now() WHERE id = 4`, db.database);
    await syncSucceeded(api, sourceId);
    const rows = (await run(api, 'select id, amount::varchar as amount from lake.numbers.prices order by id'))
      .data as Json[];
    expect(rows.find((r) => r.id === 4)?.amount).toBe('1.125');
    expect(rows.find((r) => r.id === 1)?.amount).toBe('1.250');
    expect(rows.filter((r) => r.amount === null)).toEqual([]);
  });
});
