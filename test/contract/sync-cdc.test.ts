import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobWhen, jsonClient, run, syncEnded, syncSucceeded, type Json } from '../helpers/queries.js';
import {
  LOGICAL_REPLICATION,
  startPrivatePostgres,
  useLogicalSource,
  useTestDatabase,
  type PrivatePostgres,
} from '../helpers/postgres.js';
import { inMemory, type Harness } from '../helpers/transports.js';
import { join } from 'node:path';
import { syncPostgres } from '../../src/service/syncs/postgres-extract.js';
import { SYNC_DEFAULTS } from '../../src/service/syncs/settings.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Change data capture from PostgreSQL's logical replication (pgoutput), on a cluster of the test's own with
 * `wal_level = logical`: the first sync copies the tables in the slot's exported snapshot, later ones apply the
 * changes since (inserts, updates with TOASTed values left alone or changed, deletes, truncates), and after every
 * sync each lake table equals the source.
 */
describe('cdc syncs', () => {
  let server: PrivatePostgres;
  let source: pg.Client;
  let api: Harness;
  let sourceId: string;
  let port: number;
  beforeAll(async () => {
    server = await startPrivatePostgres(LOGICAL_REPLICATION);
    port = Number(new URL(server.url).port);
    source = new pg.Client({ connectionString: server.url });
    await source.connect();
    await source.query(
      `CREATE TABLE public.items (id int PRIMARY KEY, v text, n numeric(10,2), big text, at timestamptz);
       ALTER TABLE public.items ALTER big SET STORAGE EXTERNAL;
       INSERT INTO public.items SELECT g, 'v' || g, g * 1.25, CASE WHEN g % 10 = 0 THEN repeat(md5(g::text), 300) END,
         '2024-01-01'::timestamptz + g * interval '1 hour' FROM generate_series(1, 200) g;
       CREATE TABLE public.plain (id int PRIMARY KEY, v text);
       INSERT INTO public.plain SELECT g, 'p' || g FROM generate_series(1, 20) g;`,
    );
    api = await inMemory.start();
    const created = await request('POST', '/sources', {
      connector: 'postgres',
      name: 'changes',
      config: { port, database: 'postgres' },
      host: 'localhost',
      user: 'postgres',
    });
    sourceId = created.id as string;
    await request('PATCH', `/sources/${sourceId}`, {
      tables: [
        { schema: 'public', name: 'items', mode: 'cdc' },
        { schema: 'public', name: 'plain', mode: 'full' },
      ],
    });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await source?.end();
    await server?.stop();
  });

  const request = (method: string, path: string, body?: object): Promise<Json> => jsonClient(api)(method, path, body);
  const sync = async (): Promise<Json> => {
    const job = await syncSucceeded(api, sourceId);
    const latest = (await request('GET', `/sources/${sourceId}`)).latest_sync as Json;
    expect(latest.id).toBe(job.id);
    return (latest.tables as Json[]).find((t) => t.table === 'public.items') as Json;
  };

  /** Every row of the source table, and of the lake's, compared whole (both ways: what one has the other has). */
  async function expectEqual(): Promise<void> {
    const want = (
      await source.query(
        `SELECT id, v, n::text AS n, md5(big) AS big, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS at FROM public.items ORDER BY id`,
      )
    ).rows;
    const sql = `select id, v, n::varchar as n, md5(big) as big, strftime(timezone('UTC', "at"), '%Y-%m-%d %H:%M:%S') as "at" from lake.changes.items order by id`;
    const first = await run(api, sql);
    let rows = first.data as Json[];
    for (let cursor = first.next_cursor; cursor;) {
      const page = await request('GET', `/queries/${first.id}?format=inline&limit=1000&starting_after=${cursor}`);
      rows = [...rows, ...(page.data as Json[])];
      cursor = page.next_cursor;
    }
    expect(rows).toEqual(want);
  }

  it('copies the tables in the slot snapshot, and creates the slot and publication once', async () => {
    const table = await sync();
    expect(table).toMatchObject({ phase: 'committed', completed: 200 });
    await expectEqual();
    const slots = await source.query(
      "SELECT slot_name, plugin FROM pg_replication_slots WHERE slot_name LIKE 'lake_%'",
    );
    expect(slots.rows).toEqual([{ slot_name: `lake_${sourceId}`, plugin: 'pgoutput' }]);
    const published = await source.query('SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1', [
      `lake_${sourceId}`,
    ]);
    expect(published.rows).toEqual([{ schemaname: 'public', tablename: 'items' }]);
  });

  it('applies inserts, updates (TOASTed values left alone or changed) and deletes, and moves the slot on', async () => {
    await source.query(
      `INSERT INTO public.items VALUES (1001, 'new', 1.5, repeat('z', 9000), now());
       UPDATE public.items SET v = 'touched' WHERE id IN (10, 20, 30);
       UPDATE public.items SET big = repeat('changed', 2000) WHERE id = 40;
       UPDATE public.items SET n = n + 1 WHERE id BETWEEN 50 AND 59;
       DELETE FROM public.items WHERE id IN (3, 5, 70);`,
    );
    const before = (await source.query(`SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots`)).rows[0];
    const table = await sync();
    expect(table.deleted).toBe(3);
    await expectEqual();
    const after = (await source.query(`SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots`)).rows[0];
    expect(after?.lsn).not.toBe(before?.lsn);
    // Nothing more: a sync applies nothing and the table stays as it is.
    await sync();
    await expectEqual();
  });

  it('a key changed, a row deleted and inserted again, and a truncate followed by inserts', async () => {
    await source.query(
      `UPDATE public.items SET id = 5000 WHERE id = 7;
       DELETE FROM public.items WHERE id = 8;
       INSERT INTO public.items VALUES (8, 'again', 8, NULL, now());`,
    );
    await sync();
    await expectEqual();
    await source.query(
      `TRUNCATE public.items;
       INSERT INTO public.items SELECT g, 'after truncate', g, CASE WHEN g = 2 THEN repeat('t', 10000) END, now() FROM generate_series(1, 5) g;
       UPDATE public.items SET v = 'and changed' WHERE id = 2;`,
    );
    await sync();
    await expectEqual();
  });

  it('a crash after the commit and before the slot moves on: the next sync applies nothing twice', async () => {
    await source.query(
      `INSERT INTO public.items VALUES (7001, 'crash', 1, NULL, now());
       UPDATE public.items SET v = 'before the crash' WHERE id = 9;
       DELETE FROM public.items WHERE id = 11;`,
    );
    const slotAt = async (): Promise<string> =>
      (await source.query<{ lsn: string }>('SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots')).rows[0]
        ?.lsn as string;
    const before = await slotAt();
    const record = await api.services.sources.store.get(api.home.organization.id, sourceId);
    const table = record?.tables.find((t) => t.name === 'items');
    // The process "dies" the moment the table's commit is reported: the slot is never told.
    const crash = new AbortController();
    await syncPostgres({
      sourceId,
      hadSlot: true,
      cdcTables: [{ schema: 'public', name: 'items' }],
      onSlot: async () => undefined,
      settings: await api.services.sources.connectSettings(record as NonNullable<typeof record>),
      tasks: [
        {
          table: table as NonNullable<typeof table>,
          key: 'public.items',
          lakeSchema: 'changes',
          lakeTable: 'items',
          incremental: false,
          softDeletes: false,
        },
      ],
      states: await api.services.syncs.store.states(sourceId),
      lake: api.services.lake,
      organizationId: api.home.organization.id,
      stagingDir: join(tempDir('lake-cdc-crash'), 'staging'),
      syncedAt: new Date().toISOString(),
      reporter: {
        phase: (task, phase) => {
          if (phase === 'committed' && task.table.mode === 'cdc') crash.abort();
        },
        rows: () => undefined,
        schemaChange: () => undefined,
      },
      signal: crash.signal,
      limits: SYNC_DEFAULTS,
    });
    expect(await slotAt()).toBe(before);
    await expectEqual();
    // The next sync reads the same changes again from the slot; the table's tag says they are in, so none twice.
    await sync();
    await expectEqual();
    expect(await slotAt()).not.toBe(before);
  });

  it('a sync of some cdc tables keeps the others changes; a cdc table enabled again is copied whole', async () => {
    await request('PATCH', `/sources/${sourceId}`, { tables: [{ schema: 'public', name: 'plain', mode: 'cdc' }] });
    await sync();
    await source.query(`INSERT INTO public.plain VALUES (1001, 'only plain')`);
    await source.query(`UPDATE public.items SET v = 'items only' WHERE id = (SELECT min(id) FROM public.items)`);
    // Only items: plain's change stays in the slot for plain's next sync.
    const only = await request('POST', `/sources/${sourceId}/sync`, { tables: ['public.items'] });
    expect(await jobWhen((path) => request('GET', path), only.id as string)).toMatchObject({ status: 'succeeded' });
    await expectEqual();
    await sync();
    const plain = await run(api, 'select v from lake.changes.plain where id = 1001');
    expect(plain.data).toEqual([{ v: 'only plain' }]);
    // Off, changed while off (its changes are not published), and on again: copied whole, nothing missed.
    await request('PATCH', `/sources/${sourceId}`, { tables: [{ schema: 'public', name: 'plain', enabled: false }] });
    await sync();
    await source.query(`UPDATE public.plain SET v = 'while off' WHERE id = 1; DELETE FROM public.plain WHERE id = 2`);
    await sync();
    await request('PATCH', `/sources/${sourceId}`, { tables: [{ schema: 'public', name: 'plain', enabled: true }] });
    await sync();
    const rows = await run(
      api,
      'select count(*) filter (where id = 2) as gone, max(v) filter (where id = 1) as v from lake.changes.plain',
    );
    expect(rows.data).toEqual([{ gone: 0, v: 'while off' }]);
    await request('PATCH', `/sources/${sourceId}`, { tables: [{ schema: 'public', name: 'plain', mode: 'full' }] });
  });

  it('reports the slot on the source, warns past the WAL limit, and drops the slot when no table uses cdc', async () => {
    const reported = (await request('GET', `/sources/${sourceId}`)).cdc as Json;
    const slot = (
      await source.query('SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots WHERE slot_name = $1', [
        `lake_${sourceId}`,
      ])
    ).rows[0];
    expect(reported).toMatchObject({
      slot: `lake_${sourceId}`,
      publication: `lake_${sourceId}`,
      confirmed_lsn: slot?.lsn,
      retained_wal_bytes: expect.any(Number),
      warning: null,
    });
    // A limit of 1 MB, and more than that of WAL the slot must keep until the next sync.
    await request('PATCH', `/sources/${sourceId}`, { config: { slot_wal_warning_mb: 1 } });
    await source.query(
      `CREATE TABLE public.filler AS SELECT g, repeat('w', 500) AS w FROM generate_series(1, 20000) g`,
    );
    await source.query(`INSERT INTO public.items VALUES (9001, 'wal', 1, NULL, now())`);
    await source.query(`DROP TABLE public.filler`);
    const job = await syncSucceeded(api, sourceId);
    const warned = (await request('GET', `/sources/${sourceId}`)).cdc as Json;
    expect(warned.warning).toMatch(/keeps \d+ MB of WAL on the source, past the 1 MB limit/);
    const logs = (await request('GET', `/logs?source=${sourceId}&kind=warning`)).data as Json[];
    expect(logs[0]).toMatchObject({ kind: 'warning' });
    expect(JSON.stringify(logs[0])).toContain(job.id);
    await request('PATCH', `/sources/${sourceId}`, { config: { slot_wal_warning_mb: 1024 } });
    await expectEqual();
  });

  it('a column added at the source comes with the changes (earlier rows NULL); one dropped stays and is no longer written', async () => {
    const before = await api.services.lake.tables.get(api.home.organization.id, 'changes', 'items');
    await source.query(
      `ALTER TABLE public.items ADD COLUMN extra int DEFAULT 7; UPDATE public.items SET v = 'after alter' WHERE id = (SELECT min(id) FROM public.items)`,
    );
    // The changes before the ALTER and after it come in one sync (the stream announces the table again).
    await source.query(`INSERT INTO public.items (id, v, n, extra) VALUES (6001, 'with extra', 1, 42)`);
    await sync();
    await expectEqual();
    const after = await api.services.lake.tables.get(api.home.organization.id, 'changes', 'items');
    // Not copied again: the earlier files are still the table's, and read NULL for the new column.
    expect(after?.snapshot.files).toEqual(
      expect.arrayContaining(before?.snapshot.files.filter((f) => !f.includes('/delete-')) ?? []),
    );
    // Only the rows changed since the ALTER have it; every earlier row reads NULL (the source says 7 for them).
    const counts = await run(
      api,
      'select count(*) filter (where extra is null) as nulls, count(*) filter (where extra is not null) as with_extra, count(*) as total from lake.changes.items',
    );
    expect(counts.data?.[0]).toMatchObject({ with_extra: 2 });
    expect(counts.data?.[0]?.nulls).toBe((counts.data?.[0]?.total as number) - 2);
    const changed = await run(api, 'select extra from lake.changes.items where extra is not null order by extra');
    expect(changed.data).toEqual([{ extra: 7 }, { extra: 42 }]);
    const logs = (await request('GET', `/logs?source=${sourceId}&kind=schema_change`)).data as Json[];
    expect(logs.some((l) => JSON.stringify(l).includes('extra'))).toBe(true);
    // Writes while a sync runs: whatever it did not read comes with the next one.
    const writing = (async () => {
      for (let i = 0; i < 20; i++) {
        await source.query(
          `UPDATE public.items SET v = 'during ${i}' WHERE id = (SELECT min(id) FROM public.items) + ${i}`,
        );
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    await sync();
    await writing;
    await sync();
    await expectEqual();
    // Dropped at the source: the column stays in the lake with the values it had, and stops being written.
    const kept = await run(api, 'select count(extra) as n from lake.changes.items');
    const held = await api.services.lake.tables.get(api.home.organization.id, 'changes', 'items');
    await source.query(`ALTER TABLE public.items DROP COLUMN extra`);
    await sync();
    await expectEqual();
    await source.query(`UPDATE public.items SET v = 'after drop' WHERE id = 6001`);
    await sync();
    await expectEqual();
    const dropped = await api.services.lake.tables.get(api.home.organization.id, 'changes', 'items');
    expect(dropped?.snapshot.files).toEqual(
      expect.arrayContaining(held?.snapshot.files.filter((f) => !f.includes('/delete-')) ?? []),
    );
    const columns = (await request('GET', '/catalog/changes/items')).columns as Json[];
    expect(columns.map((c) => c.name)).toContain('extra');
    expect((await run(api, 'select count(extra) as n from lake.changes.items')).data).toEqual([
      { n: (kept.data?.[0]?.n as number) - 1 },
    ]);
    expect((await run(api, 'select extra from lake.changes.items where id = 6001')).data).toEqual([{ extra: null }]);
    const dropLogs = (await request('GET', `/logs?source=${sourceId}&kind=schema_change`)).data as Json[];
    expect(dropLogs.length).toBeGreaterThan(logs.length);
  });

  it('a column dropped among the changes: TOASTed values left unchanged before and after it still land right', async () => {
    await source.query(
      `CREATE TABLE public.wide (id int PRIMARY KEY, a text, b int, big text, c text);
       ALTER TABLE public.wide ALTER big SET STORAGE EXTERNAL;
       INSERT INTO public.wide SELECT g, 'a' || g, g, repeat(md5(g::text), 300), 'c' || g FROM generate_series(1, 50) g;`,
    );
    const tables = [
      { schema: 'public', name: 'items', mode: 'cdc' },
      { schema: 'public', name: 'plain', mode: 'full' },
      { schema: 'public', name: 'wide', mode: 'cdc', enabled: true },
    ];
    await request('POST', `/sources/${sourceId}/test`, {});
    await request('PATCH', `/sources/${sourceId}`, { tables });
    await sync();
    const equal = async (): Promise<void> => {
      const want = (await source.query(`SELECT id, a, md5(big) AS big, c::text AS c FROM public.wide ORDER BY id`))
        .rows;
      const got = await run(api, 'select id, a, md5(big) as big, c::varchar as c from lake.changes.wide order by id');
      expect(got.data).toEqual(want);
    };
    await equal();
    const before = await api.services.lake.tables.get(api.home.organization.id, 'changes', 'wide');
    // One sync reads changes from before the drop (big unchanged, 4th of five columns) and after it (3rd of four).
    await source.query(
      `UPDATE public.wide SET a = 'before drop' WHERE id IN (1, 2);
       ALTER TABLE public.wide DROP COLUMN b;
       UPDATE public.wide SET c = 'after drop' WHERE id IN (2, 3);
       INSERT INTO public.wide VALUES (51, 'new', repeat('n', 9000), 'c51');
       DELETE FROM public.wide WHERE id = 4;`,
    );
    await sync();
    await equal();
    const after = await api.services.lake.tables.get(api.home.organization.id, 'changes', 'wide');
    expect(after?.snapshot.files).toEqual(expect.arrayContaining(before?.snapshot.files ?? []));
    // The rows changed in the sync that saw the drop read NULL for it; the others keep their values.
    const b = await run(api, 'select id, b from lake.changes.wide where id <= 6 or id = 51 order by id');
    expect(b.data).toEqual([
      { id: 1, b: null },
      { id: 2, b: null },
      { id: 3, b: null },
      { id: 5, b: 5 },
      { id: 6, b: 6 },
      { id: 51, b: null },
    ]);
    // NOT NULL set and dropped again at the source: the same column (its ids kept), so earlier files still read.
    await source.query(
      `ALTER TABLE public.wide ALTER a SET NOT NULL; UPDATE public.wide SET a = 'not null' WHERE id = 7`,
    );
    await sync();
    await equal();
    await source.query(`ALTER TABLE public.wide ALTER a DROP NOT NULL; UPDATE public.wide SET a = NULL WHERE id = 8`);
    await sync();
    await equal();
    const nullable = await api.services.lake.tables.get(api.home.organization.id, 'changes', 'wide');
    expect(nullable?.snapshot.files).toEqual(
      expect.arrayContaining(after?.snapshot.files.filter((f) => !f.includes('/delete-')) ?? []),
    );
    // Retyped among the changes (values before it would not load as the new type): the table is copied whole,
    // and its changes from before the new type are already in the copy.
    await source.query(
      `UPDATE public.wide SET c = 'x' || id WHERE id = 9;
       ALTER TABLE public.wide ALTER c TYPE int USING length(c);
       UPDATE public.wide SET c = 99 WHERE id = 10;`,
    );
    await sync();
    await equal();
    await source.query(`UPDATE public.wide SET c = 100 WHERE id = 11`);
    await sync();
    await equal();
    // Added again under the same name (another column now): the table is copied whole.
    await source.query(`ALTER TABLE public.wide ADD COLUMN b text; UPDATE public.wide SET b = 'new b' WHERE id = 6`);
    await sync();
    await equal();
    const again = await run(
      api,
      "select count(*) filter (where b = 'new b') as marked, count(b) as n from lake.changes.wide",
    );
    expect(again.data).toEqual([{ marked: 1, n: 1 }]);
    await request('PATCH', `/sources/${sourceId}`, { tables: tables.slice(0, 2) });
  });

  it('fails a cdc table whose key column is gone with what to do, and follows it again once the key is set', async () => {
    await source.query(
      `CREATE TABLE public.rekeyed (id int PRIMARY KEY, code int NOT NULL, v text);
       INSERT INTO public.rekeyed VALUES (1, 101, 'a'), (2, 102, 'b');`,
    );
    const created = await request('POST', '/sources', {
      connector: 'postgres',
      name: 'rekeyed',
      config: { port, database: 'postgres' },
      host: 'localhost',
      user: 'postgres',
    });
    const id = created.id as string;
    await request('PATCH', `/sources/${id}`, {
      tables: (created.tables as Json[]).map((t) =>
        t.name === 'rekeyed'
          ? { schema: 'public', name: 'rekeyed', mode: 'cdc' }
          : { schema: t.schema, name: t.name, enabled: false },
      ),
    });
    const rekeyed = async (): Promise<Json> => {
      await syncEnded(api, id);
      const latest = (await request('GET', `/sources/${id}`)).latest_sync as Json;
      return (latest.tables as Json[]).find((t) => t.table === 'public.rekeyed') as Json;
    };
    expect(await rekeyed()).toMatchObject({ phase: 'committed' });
    await source.query(
      `ALTER TABLE public.rekeyed DROP COLUMN id; ALTER TABLE public.rekeyed ADD PRIMARY KEY (code);
       UPDATE public.rekeyed SET v = 'changed' WHERE code = 102;`,
    );
    expect(await rekeyed()).toMatchObject({
      phase: 'failed',
      error: expect.stringMatching(/^its primary key names a column the table does not have \(id\); set the key again/),
    });
    await request('PATCH', `/sources/${id}`, {
      tables: [{ schema: 'public', name: 'rekeyed', primary_key: ['code'] }],
    });
    expect(await rekeyed()).toMatchObject({ phase: 'committed' });
    expect((await run(api, 'select code, v from lake.rekeyed.rekeyed order by code')).data).toEqual([
      { code: 101, v: 'a' },
      { code: 102, v: 'changed' },
    ]);
    await request('DELETE', `/sources/${id}`);
  });

  it('random changes between syncs end equal every time', async () => {
    await source.query(
      `INSERT INTO public.items SELECT g, 'r' || g, g, CASE WHEN g % 3 = 0 THEN repeat(md5(g::text), 400) END, now() FROM generate_series(100, 400) g`,
    );
    await sync();
    let seed = 42;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 6; round++) {
      const statements: string[] = [];
      for (let i = 0; i < 30; i++) {
        const id = 100 + random(400);
        const kind = random(5);
        if (kind === 0) statements.push(`DELETE FROM public.items WHERE id = ${id}`);
        else if (kind === 1)
          statements.push(
            `INSERT INTO public.items VALUES (${id}, 'i${round}', ${id}, NULL, now()) ON CONFLICT (id) DO UPDATE SET v = 'upsert ${round}'`,
          );
        else if (kind === 2) statements.push(`UPDATE public.items SET v = 'u${round}-${i}' WHERE id = ${id}`);
        else if (kind === 3)
          statements.push(`UPDATE public.items SET big = repeat('b${round}', 3000) WHERE id = ${id}`);
        else statements.push(`UPDATE public.items SET n = ${random(1000)} / 7.0 WHERE id = ${id}`);
      }
      await source.query(statements.join(';\n'));
      await sync();
      await expectEqual();
    }
  });
});

describe('the cdc slot lifecycle', () => {
  let server: PrivatePostgres;
  let source: pg.Client;
  let api: Harness;
  beforeAll(async () => {
    server = await startPrivatePostgres(LOGICAL_REPLICATION);
    source = new pg.Client({ connectionString: server.url });
    await source.connect();
    await source.query(`CREATE TABLE public.t (id int PRIMARY KEY, v text); INSERT INTO public.t VALUES (1, 'one');`);
    api = await inMemory.start();
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await source?.end();
    await server?.stop();
  });
  const send = (method: string, path: string, body?: object): Promise<Json> => jsonClient(api)(method, path, body);
  /** A source on the test's cluster as `user` with public.t in cdc mode, whose first sync fails: the table's error. */
  const cdcSourceAs = async (name: string, user: string): Promise<{ id: string; error: string }> => {
    const created = await send('POST', '/sources', {
      connector: 'postgres',
      name,
      config: { port: Number(new URL(server.url).port), database: 'postgres' },
      host: 'localhost',
      user,
    });
    const id = created.id as string;
    await send('PATCH', `/sources/${id}`, { tables: [{ schema: 'public', name: 't', mode: 'cdc' }] });
    expect((await syncEnded(api, id)).status).toBe('failed');
    const table = ((await send('GET', `/sources/${id}`)).latest_sync.tables as Json[]).find(
      (t) => t.table === 'public.t',
    ) as Json;
    return { id, error: table.error as string };
  };
  const slots = async (): Promise<string[]> =>
    (await source.query<{ slot_name: string }>('SELECT slot_name FROM pg_replication_slots')).rows.map(
      (r) => r.slot_name,
    );
  const publications = async (): Promise<string[]> =>
    (await source.query<{ pubname: string }>('SELECT pubname FROM pg_publication')).rows.map((r) => r.pubname);

  it('is dropped when no table uses cdc any more, made again when one does, and dropped with the source', async () => {
    const created = await send('POST', '/sources', {
      connector: 'postgres',
      name: 'lifecycle',
      config: { port: Number(new URL(server.url).port), database: 'postgres' },
      host: 'localhost',
      user: 'postgres',
    });
    const id = created.id as string;
    await send('PATCH', `/sources/${id}`, { tables: [{ schema: 'public', name: 't', mode: 'cdc' }] });
    await syncSucceeded(api, id);
    expect(await slots()).toEqual([`lake_${id}`]);
    expect(await publications()).toEqual([`lake_${id}`]);
    // Created once: a second sync uses the same slot.
    await syncSucceeded(api, id);
    expect(await slots()).toEqual([`lake_${id}`]);
    await send('PATCH', `/sources/${id}`, { tables: [{ schema: 'public', name: 't', mode: 'full' }] });
    await syncSucceeded(api, id);
    expect(await slots()).toEqual([]);
    expect(await publications()).toEqual([]);
    expect((await send('GET', `/sources/${id}`)).cdc).toBeNull();
    await send('PATCH', `/sources/${id}`, { tables: [{ schema: 'public', name: 't', mode: 'cdc' }] });
    await source.query(`INSERT INTO public.t VALUES (2, 'two')`);
    await syncSucceeded(api, id);
    expect(await slots()).toEqual([`lake_${id}`]);
    const rows = await run(api, 'select id, v from lake.lifecycle.t order by id');
    expect(rows.data).toEqual([
      { id: 1, v: 'one' },
      { id: 2, v: 'two' },
    ]);
    // Dropped behind lake's back: the next sync makes it again and copies the table whole (a resnapshot).
    await source.query(`SELECT pg_drop_replication_slot('lake_${id}')`);
    await source.query(`INSERT INTO public.t VALUES (3, 'three'); DELETE FROM public.t WHERE id = 1`);
    await syncSucceeded(api, id);
    expect(await slots()).toEqual([`lake_${id}`]);
    expect((await run(api, 'select id, v from lake.lifecycle.t order by id')).data).toEqual([
      { id: 2, v: 'two' },
      { id: 3, v: 'three' },
    ]);
    await send('DELETE', `/sources/${id}`);
    expect(await slots()).toEqual([]);
    expect(await publications()).toEqual([]);
  });

  it('refuses a role that may replicate but does not own the tables, saying who can publish them', async () => {
    await source.query(`CREATE ROLE lake_replicator LOGIN REPLICATION; GRANT SELECT ON public.t TO lake_replicator`);
    const { id, error } = await cdcSourceAs('not the owner', 'lake_replicator');
    expect(error).toContain(`CREATE PUBLICATION lake_${id} FOR TABLE "public"."t"`);
    expect(error).not.toContain('lake_replicator');
    expect(await slots()).toEqual([]);
  });

  it('soft deletes keep a row the stream deleted, marked', async () => {
    await source.query(
      `CREATE TABLE public.s (id int PRIMARY KEY, v text); INSERT INTO public.s VALUES (1, 'a'), (2, 'b')`,
    );
    const created = await send('POST', '/sources', {
      connector: 'postgres',
      name: 'soft stream',
      config: { port: Number(new URL(server.url).port), database: 'postgres', deletes: 'soft' },
      host: 'localhost',
      user: 'postgres',
    });
    const id = created.id as string;
    await send('PATCH', `/sources/${id}`, {
      tables: (created.tables as Json[]).map((t) => ({
        schema: 'public',
        name: t.name,
        ...(t.name === 's' ? { mode: 'cdc' } : { enabled: false }),
      })),
    });
    await syncSucceeded(api, id);
    await source.query(`DELETE FROM public.s WHERE id = 1; INSERT INTO public.s VALUES (3, 'c')`);
    await syncSucceeded(api, id);
    const rows = await run(api, 'select id, v, _deleted_at is not null as deleted from lake.soft_stream.s order by id');
    expect(rows.data).toEqual([
      { id: 1, v: 'a', deleted: true },
      { id: 2, v: 'b', deleted: false },
      { id: 3, v: 'c', deleted: false },
    ]);
    await send('DELETE', `/sources/${id}`);
  });

  it('refuses a role that may not replicate, saying what to do', async () => {
    await source.query(`CREATE ROLE lake_plain LOGIN; GRANT SELECT ON public.t TO lake_plain`);
    const { error } = await cdcSourceAs('no replication', 'lake_plain');
    expect(error).toContain('WITH REPLICATION');
    expect(error).not.toContain('lake_plain');
    expect(await slots()).toEqual([]);
  });
});

describe('a cdc change larger than a sync takes', () => {
  const cluster = useLogicalSource(
    `CREATE TABLE public.blobs (id int PRIMARY KEY, body text); INSERT INTO public.blobs VALUES (1, 'small')`,
  );
  let api: Harness;
  beforeAll(async () => {
    api = await inMemory.start({ services: { syncSettings: { ...SYNC_DEFAULTS, maxRecordBytes: 64 << 10 } } });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('fails the table naming the cap, without reading the change into memory, and the slot stays', async () => {
    const call = jsonClient(api);
    const created = await call('POST', '/sources', cluster.sourceBody('big change'));
    await call('PATCH', `/sources/${created.id}`, { tables: [{ schema: 'public', name: 'blobs', mode: 'cdc' }] });
    await syncSucceeded(api, created.id as string);
    const at = async (): Promise<string> =>
      (await cluster.admin.query<{ lsn: string }>('SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots'))
        .rows[0]?.lsn as string;
    const before = await at();
    await cluster.admin.query(`INSERT INTO public.blobs VALUES (2, repeat(md5(random()::text), 10000))`);
    expect((await syncEnded(api, created.id as string)).status).toBe('failed');
    const table = ((await call('GET', `/sources/${created.id}`)).latest_sync.tables as Json[])[0] as Json;
    expect(table.error).toContain('LAKE_SYNC_MAX_RECORD_BYTES');
    expect(await at()).toBe(before);
  });
});

/**
 * The idle timeout is for a source that leaves lake waiting, not for a session lake asks nothing of just then. A cdc
 * sync's control session waits while the tables are copied and while the change stream is read on a session of its
 * own; it was ended at the idle timeout however busy the other sessions were, so a copy longer than the timeout (30
 * min by default) failed every time ("Client has encountered a connection error").
 */
describe('a cdc sync longer than the idle timeout', () => {
  const cluster = useLogicalSource(
    `CREATE TABLE public.rows (id int PRIMARY KEY, v text);
     INSERT INTO public.rows SELECT g, md5(g::text) FROM generate_series(1, 3000000) g`,
  );
  let api: Harness;
  beforeAll(async () => {
    // The copy takes 1.1 s on a fast day of this machine (2,000,000 rows took 0.75 s, under the 0.8 s once set).
    api = await inMemory.start({ services: { syncSettings: { ...SYNC_DEFAULTS, idleTimeoutMs: 600 } } });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('copies, then applies changes, while its control session waits longer than the timeout', async () => {
    const call = jsonClient(api);
    const created = await call('POST', '/sources', cluster.sourceBody('long', { sync_connections: 1 }));
    await call('PATCH', `/sources/${created.id}`, { tables: [{ schema: 'public', name: 'rows', mode: 'cdc' }] });
    const started = Date.now();
    await syncSucceeded(api, created.id as string);
    // The copy itself took longer than the idle timeout, or this test shows nothing.
    expect(Date.now() - started).toBeGreaterThan(600);
    // A change whose read starts within the timeout (PostgreSQL decodes the whole change before its first row).
    await cluster.admin.query(`UPDATE public.rows SET v = 'changed' WHERE id % 100 = 0`);
    await syncSucceeded(api, created.id as string);
    const lake = await run(
      api,
      "select count(*) filter (where v = 'changed') as changed, count(*) as n from lake.long.rows",
    );
    expect(lake.data[0]).toEqual({ changed: 30000, n: 3000000 });
  }, 90_000);
});

describe('cdc on a source that cannot serve it', () => {
  const db = useTestDatabase();
  let api: Harness;
  beforeAll(async () => {
    api = await inMemory.start();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('fails the cdc table with what to do when wal_level is not logical, and syncs the others', async () => {
    const call = jsonClient(api);
    const created = await call('POST', '/sources', {
      connector: 'postgres',
      name: 'replica level',
      config: { port: db.port, database: db.database },
      host: db.host,
      user: db.reader,
    });
    await call('PATCH', `/sources/${created.id}`, { tables: [{ schema: 'public', name: 'orders', mode: 'cdc' }] });
    expect((await syncEnded(api, created.id as string)).status).toBe('failed');
    const latest = await call('GET', `/sources/${created.id}`);
    const orders = (latest.latest_sync.tables as Json[]).find((t) => t.table === 'public.orders') as Json;
    expect(orders.error).toContain('wal_level = logical');
    expect(orders.error).not.toContain(db.reader);
    const customers = (latest.latest_sync.tables as Json[]).find((t) => t.table === 'public.customers') as Json;
    expect(customers.phase).toBe('committed');
  });
});
