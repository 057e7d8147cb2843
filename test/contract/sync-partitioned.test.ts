import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useLogicalSource } from '../helpers/postgres.js';
import { jsonClient, run, syncEnded, type Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * A table partitioned at the source. Discovery listed the partitioned table and each partition, so a new source
 * synced every row twice (into `m` and into `m_2024`, `m_2025`); and the publication of a cdc table `m` sent its
 * changes as its partitions', and listed them instead of `m`: lake read `m` as missing from the publication and
 * copied it whole at every sync, taking none of its changes (0 inserts, updates, deletes). Now partitions are not
 * listed, and the publication sends their changes as the partitioned table's.
 */
describe('a table partitioned at a PostgreSQL source', () => {
  const source = useLogicalSource(`CREATE TABLE m (id int, d date, v text, PRIMARY KEY (id, d)) PARTITION BY RANGE (d);
    CREATE TABLE m_2024 PARTITION OF m FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
    CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
    INSERT INTO m VALUES (1, '2024-05-01', 'a'), (2, '2025-05-01', 'b');
    CREATE SCHEMA legacy; CREATE TABLE legacy.p (id int PRIMARY KEY, v text);
    CREATE TABLE legacy.c (extra int) INHERITS (legacy.p); CREATE TABLE legacy.q (id int PRIMARY KEY);
    INSERT INTO legacy.p VALUES (1, 'parent'); INSERT INTO legacy.c VALUES (2, 'child', 9); INSERT INTO legacy.q VALUES (1);
    CREATE UNLOGGED TABLE legacy.u (id int PRIMARY KEY); INSERT INTO legacy.u VALUES (1);
    CREATE TABLE legacy.g (id int PRIMARY KEY, a int, b int GENERATED ALWAYS AS (a * 2) STORED);
    INSERT INTO legacy.g (id, a) VALUES (1, 1);`);
  let api: Harness;
  let call: ReturnType<typeof jsonClient>;
  beforeAll(async () => {
    api = await inMemory.start();
    call = jsonClient(api);
  });
  afterAll(async () => {
    await api?.close();
  });

  const sourceRows = async (): Promise<Json[]> =>
    (await source.admin.query('SELECT id, d::text AS d, v FROM m ORDER BY id')).rows as Json[];
  const lakeRows = async (schema: string): Promise<Json[]> =>
    (await run(api, `select id, d::varchar as d, v from ${schema}.m order by id`)).data as Json[];

  for (const mode of ['full', 'cdc'] as const) {
    it(`is one table, with its partitions' rows once, and follows its source (${mode})`, async () => {
      const schema = `part_${mode}`;
      const created = await call('POST', '/sources', source.sourceBody(schema));
      expect((created.tables as Json[]).map((t) => t.name)).toEqual(['m']);
      await call('PATCH', `/sources/${created.id}`, { tables: [{ schema: 'public', name: 'm', mode }] });
      expect((await syncEnded(api, created.id as string)).status).toBe('succeeded');
      expect(await lakeRows(schema)).toEqual(await sourceRows());
      const key = mode === 'full' ? 10 : 20;
      await source.admin.query(
        `INSERT INTO m VALUES (${key}, '2024-06-01', 'c'); UPDATE m SET v = v || '${mode}' WHERE id = 2;
         DELETE FROM m WHERE id = (SELECT min(id) FROM m WHERE id <> 2)`,
      );
      expect((await syncEnded(api, created.id as string)).status).toBe('succeeded');
      expect(await lakeRows(schema)).toEqual(await sourceRows());
      if (mode === 'cdc') {
        const latest = (await call('GET', `/sources/${created.id}`)).latest_sync as Json;
        expect((latest.tables as Json[])[0]?.changes).toEqual({ inserts: 1, updates: 1, deletes: 1 });
      }
    }, 60_000);
  }

  it('follows partitions truncated, detached, attached and dropped, which the publication sends no row of (cdc)', async () => {
    const schema = 'part_moves';
    const created = await call('POST', '/sources', source.sourceBody(schema));
    await call('PATCH', `/sources/${created.id}`, { tables: [{ schema: 'public', name: 'm', mode: 'cdc' }] });
    const synced = async (): Promise<void> => {
      expect((await syncEnded(api, created.id as string)).status).toBe('succeeded');
      expect(await lakeRows(schema)).toEqual(await sourceRows());
    };
    await synced();
    await source.admin.query(`INSERT INTO m VALUES (30, '2024-07-01', 'x'), (31, '2025-07-01', 'y')`);
    await synced();
    // TRUNCATE of a partition itself is not published when changes go as the partitioned table's.
    await source.admin.query('TRUNCATE m_2024');
    await synced();
    await source.admin.query(`INSERT INTO m VALUES (32, '2024-08-01', 'z'); ALTER TABLE m DETACH PARTITION m_2025`);
    await synced();
    await source.admin.query(
      `ALTER TABLE m ATTACH PARTITION m_2025 FOR VALUES FROM ('2025-01-01') TO ('2026-01-01'); INSERT INTO m VALUES (33, '2025-09-01', 'w')`,
    );
    await synced();
    await source.admin.query('DROP TABLE m_2024');
    await synced();
    // Changes go on being taken from the log, not copies, once nothing moved.
    await source.admin.query(`INSERT INTO m VALUES (34, '2025-10-01', 'v')`);
    await synced();
    const latest = (await call('GET', `/sources/${created.id}`)).latest_sync as Json;
    expect((latest.tables as Json[])[0]?.changes).toEqual({ inserts: 1, updates: 0, deletes: 0 });
  }, 120_000);

  it('an UNLOGGED table is refused as a cdc table, saying what to do, and the other cdc tables sync', async () => {
    const created = await call('POST', '/sources', source.sourceBody('unlogged', { schemas: ['legacy'] }));
    await call('PATCH', `/sources/${created.id}`, {
      tables: [
        { schema: 'legacy', name: 'u', mode: 'cdc' },
        { schema: 'legacy', name: 'q', mode: 'cdc' },
      ],
    });
    // The publication cannot list it: that failed the whole sync, the other table with it.
    const job = await syncEnded(api, created.id as string);
    expect(job.error).toMatchObject({ code: 'tables_failed' });
    const latest = (await call('GET', `/sources/${created.id}`)).latest_sync as Json;
    const byName = Object.fromEntries((latest.tables as Json[]).map((t) => [t.table, t]));
    expect(byName['legacy.q']?.phase).toBe('committed');
    expect(byName['legacy.u']).toMatchObject({
      phase: 'failed',
      error: expect.stringMatching(/UNLOGGED.*full or incremental mode.*SET LOGGED/),
    });
  });

  it('a table with generated columns is refused as a cdc table (the stream leaves them out); in full mode it has them', async () => {
    const created = await call('POST', '/sources', source.sourceBody('generated', { schemas: ['legacy'] }));
    const only = (mode: string) => ({
      tables: ['c', 'p', 'q', 'u']
        .map((name) => ({ schema: 'legacy', name, enabled: false }))
        .concat([{ schema: 'legacy', name: 'g', mode } as never]),
    });
    await call('PATCH', `/sources/${created.id}`, only('cdc'));
    // It failed every sync after its copy, each saying the next would read it whole.
    for (let i = 0; i < 2; i++) {
      expect((await syncEnded(api, created.id as string)).status).toBe('failed');
      const latest = (await call('GET', `/sources/${created.id}`)).latest_sync as Json;
      expect((latest.tables as Json[]).find((t) => t.table === 'legacy.g')?.error).toMatch(
        /generated columns \(b\).*full or incremental mode/,
      );
    }
    await call('PATCH', `/sources/${created.id}`, only('full'));
    await source.admin.query('UPDATE legacy.g SET a = 10');
    expect((await syncEnded(api, created.id as string)).status).toBe('succeeded');
    expect((await run(api, 'select id, a, b from generated.legacy_g')).data).toEqual([{ id: 1, a: 10, b: 20 }]);
  });

  /**
   * Inheritance that is not partitioning: a copy of the parent holds its children's rows (as a SELECT of it does at
   * the source), but the publication sends a child's changes as the child's, so as a cdc table its children's rows
   * would go stale. It is refused with what to do instead; a full sync has them, and the other tables sync.
   */
  it('a table that others inherit from is refused as a cdc table, saying what to do; a full sync holds its children', async () => {
    const created = await call('POST', '/sources', source.sourceBody('legacy', { schemas: ['legacy'] }));
    const tables = [
      { schema: 'legacy', name: 'p', mode: 'cdc' },
      { schema: 'legacy', name: 'q', mode: 'cdc' },
      { schema: 'legacy', name: 'c', enabled: false },
    ];
    await call('PATCH', `/sources/${created.id}`, { tables });
    expect((await syncEnded(api, created.id as string)).status).toBe('failed');
    const latest = (await call('GET', `/sources/${created.id}`)).latest_sync as Json;
    const byName = Object.fromEntries((latest.tables as Json[]).map((t) => [t.table, t]));
    expect(byName['legacy.p']?.error).toMatch(/tables that inherit from it.*full or incremental mode/);
    expect(byName['legacy.q']?.phase).toBe('committed');
    await call('PATCH', `/sources/${created.id}`, { tables: [{ ...tables[0], mode: 'full' }, tables[1], tables[2]] });
    expect((await syncEnded(api, created.id as string)).status).toBe('succeeded');
    expect((await run(api, 'select id, v from legacy.legacy_p order by id')).data).toEqual([
      { id: 1, v: 'parent' },
      { id: 2, v: 'child' },
    ]);
  }, 60_000);
});
