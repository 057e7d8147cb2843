import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPrivilegedConnection, quoteLiteral } from '../../src/service/engine/duckdb.js';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { createPostgresSource, jsonClient, run, syncSucceeded, type Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * How queries read a table whose files have delete files: a delete file of few positions (each incremental merge
 * leaves one, the rows it read again at its cursor's last value) is read once, when the snapshot's catalog file is
 * built, and its positions are tested as constants in the scan; a delete file of many positions is read by every
 * query as a bitmap. Either way the rows are the source's.
 */
describe('reading files with delete files', () => {
  const db = useTestDatabase();
  let api: Harness;
  let sourceId: string;
  beforeAll(async () => {
    await adminQuery(
      `CREATE TABLE public.items (id int PRIMARY KEY, v text, changed timestamptz NOT NULL);
       INSERT INTO public.items SELECT g, 'v' || g, '2020-01-01'::timestamptz + g * interval '1 hour' FROM generate_series(1, 1000) g;
       GRANT SELECT ON public.items TO ${db.reader};`,
      db.database,
    );
    api = await inMemory.start();
    const call = jsonClient(api);
    sourceId = (await createPostgresSource(api, db, 'merged')).id as string;
    await call('PATCH', `/sources/${sourceId}`, {
      tables: [{ schema: 'public', name: 'items', mode: 'incremental', cursor_column: 'changed' }],
    });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
  });

  /** The view the newest catalog file of the organization holds for the table. */
  async function viewSql(): Promise<string> {
    const dir = api.services.lake.layout.catalogDir(api.home.organization.id);
    // The catalog file of the newest snapshot (`s<snapshot>.duckdb`).
    const newest = join(
      dir,
      readdirSync(dir)
        .filter((name) => /^s\d+\.duckdb$/.test(name))
        .sort((a, b) => Number(b.slice(1, -7)) - Number(a.slice(1, -7)))[0] as string,
    );
    const duck = await openPrivilegedConnection({});
    try {
      await duck.connection.run(`ATTACH ${quoteLiteral(newest)} AS c (READ_ONLY)`);
      const rows = (
        await duck.connection.runAndReadAll(
          "SELECT sql FROM duckdb_views() WHERE database_name = 'c' AND view_name = 'items'",
        )
      ).getRowObjectsJS();
      return String(rows[0]?.sql);
    } finally {
      duck.close();
    }
  }

  async function expectSourceRows(): Promise<void> {
    const source = (await adminQuery('SELECT id, v FROM public.items ORDER BY id', db.database)).rows;
    const lake = (await run(
      api,
      'select id, v from lake.merged.items order by id',
      '&format=inline&limit=1000',
    )) as Json;
    expect(lake.data).toEqual(source);
  }

  it('tests few deleted positions as constants and many through a bitmap, with the source’s rows either way', async () => {
    await syncSucceeded(api, sourceId);
    // Three rows change: the full write's file loses them and the row read again at the cursor's last value.
    await adminQuery("UPDATE public.items SET v = 'one', changed = '2030-01-01' WHERE id IN (5, 6, 7)", db.database);
    await syncSucceeded(api, sourceId);
    await expectSourceRows();
    let sql = await viewSql();
    expect(sql).toMatch(/file_row_number NOT IN \(-1, \d+, \d+, \d+, \d+\)/);
    expect(sql).not.toContain('bitstring_agg');

    // A hundred more: the full write's file now has too many deletes to list, and the first merge's file loses the
    // row the second merge read again.
    await adminQuery(
      "UPDATE public.items SET v = 'two', changed = '2030-02-01'::timestamptz + id * interval '1 second' WHERE id BETWEEN 101 AND 200",
      db.database,
    );
    await syncSucceeded(api, sourceId);
    await expectSourceRows();
    sql = await viewSql();
    expect(sql.match(/bitstring_agg/g)).toHaveLength(1);
    // The rows at the cursor's last value (5, 6 and 7) were read again, so the first merge's file lost all three.
    expect(sql).toMatch(/file_row_number NOT IN \(-1, \d+, \d+, \d+\)/);
    const deleteFiles = (
      await api.services.lake.tables.get(api.home.organization.id, 'merged', 'items')
    )?.snapshot.files.filter((f) => f.includes('/delete-'));
    expect(deleteFiles).toHaveLength(2);
    // Only the bitmap's delete file is named by the view: the other was read when the catalog file was built.
    expect(deleteFiles?.filter((f) => sql.includes(f.split('/').slice(-2).join('/')))).toHaveLength(1);
  });

  it('writes nothing when the rows at the cursor’s last value are unchanged, and merges them when they are not', async () => {
    const table = async () =>
      (await api.services.lake.tables.get(api.home.organization.id, 'merged', 'items'))?.snapshot;
    const before = await table();
    await syncSucceeded(api, sourceId);
    expect(await table()).toMatchObject({ id: before?.id, layers: before?.layers, files: before?.files });

    // Changed in place, its cursor left as it was (what >= is there for): merged.
    await adminQuery("UPDATE public.items SET v = 'same instant' WHERE id = 200", db.database);
    await syncSucceeded(api, sourceId);
    const changed = await table();
    expect(changed?.id).toBeGreaterThan(before?.id as number);
    await expectSourceRows();

    // A row committed later with the cursor's last value: merged.
    await adminQuery(
      "INSERT INTO public.items SELECT 1001, 'late', changed FROM public.items WHERE id = 200",
      db.database,
    );
    await syncSucceeded(api, sourceId);
    expect((await table())?.id).toBeGreaterThan(changed?.id as number);
    const lake = (await run(
      api,
      "select count(*) as n from lake.merged.items where v in ('late', 'same instant')",
    )) as Json;
    expect(lake.data[0].n).toBe(2);
  });
});
