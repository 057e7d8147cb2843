import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPrivilegedConnection, quoteLiteral } from '../../src/service/engine/duckdb.js';
import type { MetadataDb } from '../../src/service/store/metadata-db.js';
import { MAX_MERGES } from '../../src/service/storage/lake.js';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { run, syncSucceeded, type Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * DuckDB's type for a DuckLake type name, as the specification's "Data Types" page lists them: written out here,
 * from the specification, so this reader shares nothing with lake's own.
 */
const SPEC_TYPES: Record<string, string> = {
  boolean: 'BOOLEAN',
  int32: 'INTEGER',
  int64: 'BIGINT',
  float64: 'DOUBLE',
  varchar: 'VARCHAR',
  date: 'DATE',
  timestamptz: 'TIMESTAMP WITH TIME ZONE',
  timestamp: 'TIMESTAMP',
};

/**
 * A reader that knows only the DuckLake specification: it finds a table's columns and files at a snapshot with the
 * specification's own queries ("Queries", docs/stable/specification/queries.md in duckdb/ducklake-web), and the SQL
 * that reads them with DuckDB: every data file by field id, less the positions its delete file lists.
 */
async function specRead(store: { db: MetadataDb; prefix: string }, snapshot: number, schema: string, table: string) {
  const { db, prefix } = store;
  const t = (name: string): string => `${prefix}${name}`;
  const dataPath = (
    await db.get<{ value: string }>(`SELECT value FROM ${t('ducklake_metadata')} WHERE key = 'data_path'`)
  )?.value as string;
  const schemas = await db.all<{ schema_id: number; schema_name: string; path: string }>(
    `SELECT schema_id, schema_name, path FROM ${t('ducklake_schema')}
      WHERE ? >= begin_snapshot AND (? < end_snapshot OR end_snapshot IS NULL)`,
    [snapshot, snapshot],
  );
  const foundSchema = schemas.find((s) => s.schema_name === schema);
  if (!foundSchema) return undefined;
  const tables = await db.all<{ table_id: number; table_name: string; path: string }>(
    `SELECT table_id, table_name, path FROM ${t('ducklake_table')}
      WHERE schema_id = ? AND ? >= begin_snapshot AND (? < end_snapshot OR end_snapshot IS NULL)`,
    [foundSchema.schema_id, snapshot, snapshot],
  );
  const found = tables.find((x) => x.table_name === table);
  if (!found) return undefined;
  const columns = await db.all<{ column_id: number; column_name: string; column_type: string }>(
    `SELECT column_id, column_name, column_type FROM ${t('ducklake_column')}
      WHERE table_id = ? AND parent_column IS NULL AND ? >= begin_snapshot AND (? < end_snapshot OR end_snapshot IS NULL)
      ORDER BY column_order`,
    [found.table_id, snapshot, snapshot],
  );
  const typeOf = async (column: { column_id: number; column_type: string }): Promise<string> => {
    const decimal = /^decimal\((\d+),(\d+)\)$/.exec(column.column_type);
    if (decimal) return `DECIMAL(${decimal[1]},${decimal[2]})`;
    if (column.column_type === 'list') {
      const element = await db.get<{ column_id: number; column_type: string }>(
        `SELECT column_id, column_type FROM ${t('ducklake_column')}
          WHERE table_id = ? AND parent_column = ? AND ? >= begin_snapshot AND (? < end_snapshot OR end_snapshot IS NULL)`,
        [found.table_id, column.column_id, snapshot, snapshot],
      );
      return `${await typeOf(element as { column_id: number; column_type: string })}[]`;
    }
    const known = SPEC_TYPES[column.column_type];
    if (!known) throw new Error(`the conformance reader has no DuckDB type for ${column.column_type}`);
    return known;
  };
  const files = await db.all<{ data_file_path: string; delete_file_path: string | null }>(
    `SELECT data.path AS data_file_path, del.path AS delete_file_path
       FROM ${t('ducklake_data_file')} AS data
       LEFT JOIN (
         SELECT * FROM ${t('ducklake_delete_file')}
          WHERE ? >= begin_snapshot AND (? < end_snapshot OR end_snapshot IS NULL)
       ) AS del USING (data_file_id)
      WHERE data.table_id = ? AND ? >= data.begin_snapshot AND (? < data.end_snapshot OR data.end_snapshot IS NULL)
      ORDER BY file_order`,
    [snapshot, snapshot, found.table_id, snapshot, snapshot],
  );
  // Every path lake writes is relative: data path, then the schema's path, the table's, the file's.
  const absolute = (path: string): string => `${dataPath}${foundSchema.path}${found.path}${path}`;
  const schemaMap = `MAP {${(
    await Promise.all(
      columns.map(
        async (c) =>
          `${c.column_id}: {name: ${quoteLiteral(c.column_name)}, type: ${quoteLiteral(await typeOf(c))}, default_value: NULL}`,
      ),
    )
  ).join(', ')}}`;
  const names = columns.map((c) => `"${c.column_name.replace(/"/g, '""')}"`).join(', ');
  const sql = files.length
    ? files
        .map(
          (f) =>
            `SELECT ${names} FROM read_parquet(${quoteLiteral(absolute(f.data_file_path))}, schema = ${schemaMap}, file_row_number = true)` +
            (f.delete_file_path
              ? ` WHERE file_row_number NOT IN (SELECT pos FROM read_parquet(${quoteLiteral(absolute(f.delete_file_path))}))`
              : ''),
        )
        .join(' UNION ALL ')
    : undefined;
  return { sql, files: files.length, deletes: files.filter((f) => f.delete_file_path).length };
}

/** A table's rows as sorted text (DuckDB's own cast of each row), the same way on both sides. */
const ROWS = (from: string): string =>
  `SELECT count(*) AS n, coalesce(list(CAST(t AS VARCHAR) ORDER BY CAST(t AS VARCHAR)), []) AS rows FROM (${from}) t`;

describe('the lake as a DuckLake catalog, read by the specification alone', () => {
  const db = useTestDatabase();
  let api: Harness;
  let sourceId: string;
  beforeAll(async () => {
    await adminQuery(
      `CREATE TABLE public.items (id int PRIMARY KEY, v text, changed timestamptz NOT NULL, price numeric(10,2), tags text[]);
       INSERT INTO public.items SELECT g, 'v' || g, '2024-01-01'::timestamptz + g * interval '1 minute', g * 1.25, ARRAY['a' || g, 'b']
         FROM generate_series(1, 500) g;
       CREATE TABLE public.events (id bigint, kind text, happened date);
       INSERT INTO public.events SELECT g, CASE WHEN g % 3 = 0 THEN 'x' ELSE NULL END, DATE '2024-01-01' + g FROM generate_series(1, 300) g;
       CREATE TABLE public.odd (id int PRIMARY KEY, file_row_number int, file_index text, changed timestamptz NOT NULL);
       INSERT INTO public.odd SELECT g, g * 10, 'f' || g, '2024-01-01' FROM generate_series(1, 100) g;
       GRANT SELECT ON public.items, public.events, public.odd TO ${db.reader};`,
      db.database,
    );
    api = await inMemory.start();
    const source = (await (
      await api.request('/sources', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          connector: 'postgres',
          name: 'conf',
          config: { port: db.port, database: db.database },
          host: db.host,
          user: db.reader,
        }),
      })
    ).json()) as Json;
    sourceId = source.id as string;
    await api.request(`/sources/${sourceId}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        tables: [
          { schema: 'public', name: 'items', mode: 'incremental', cursor_column: 'changed' },
          { schema: 'public', name: 'events', mode: 'full' },
          { schema: 'public', name: 'odd', mode: 'incremental', cursor_column: 'changed' },
        ],
      }),
    });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
  });

  const sync = (): Promise<Json> => syncSucceeded(api, sourceId);

  const change = async (i: number): Promise<void> => {
    await adminQuery(
      `UPDATE public.items SET v = 'changed ${i}', changed = '2030-01-01'::timestamptz + interval '${i} hours' WHERE id IN (${i}, ${i + 100});
       INSERT INTO public.items VALUES (${1000 + i}, 'new ${i}', '2030-01-01'::timestamptz + interval '${i} hours', NULL, NULL);`,
      db.database,
    );
    await sync();
  };

  /** What lake answers, and what the specification's reader finds, for every table and view, at a snapshot. */
  async function expectSameEverywhere(snapshot: number, at: string): Promise<void> {
    const org = api.home.organization.id;
    const catalog = await api.services.lake.catalogs.for(org);
    const { connection, close } = await openPrivilegedConnection({});
    try {
      for (const table of ['items', 'events']) {
        const read = await specRead(catalog.store, snapshot, 'conf', table);
        expect(read?.sql, table).toBeDefined();
        const spec = (await connection.runAndReadAll(ROWS(read?.sql as string))).getRowObjectsJson()[0] as Json;
        const lake = await run(api, ROWS(`SELECT * FROM lake.conf.${table}${at}`));
        expect(lake.status, JSON.stringify(lake.error)).toBe('succeeded');
        expect(Number(spec.n), table).toBeGreaterThan(0);
        expect(lake.data[0].n, table).toBe(Number(spec.n));
        expect(lake.data[0].rows, table).toEqual(spec.rows);
      }
    } finally {
      close();
    }
  }

  it('every table, after full syncs, merges with updates and a compaction, at the current and an earlier snapshot', async () => {
    const org = api.home.organization.id;
    const catalog = await api.services.lake.catalogs.for(org);
    await sync();
    await change(1);
    const early = await catalog.currentSnapshot();
    await change(2);
    const merged = await specRead(catalog.store, await catalog.currentSnapshot(), 'conf', 'items');
    // The merges are DuckLake's: the changed rows as files of their own, delete files for the rows they replaced.
    expect(merged?.files).toBe(3);
    expect(merged?.deletes).toBeGreaterThan(0);
    await api.services.lake.createView(
      org,
      'reports',
      'changed',
      "SELECT id, v FROM lake.conf.items WHERE v LIKE 'changed%'",
    );
    await expectSameEverywhere(await catalog.currentSnapshot(), '');
    await expectSameEverywhere(early, ` AT (VERSION => ${early})`);
    // The view is DuckLake's, and reads as its SQL says.
    const views = await catalog.store.db.all<{ view_name: string; dialect: string; sql: string }>(
      `SELECT view_name, dialect, sql FROM ${catalog.store.prefix}ducklake_view WHERE end_snapshot IS NULL`,
    );
    expect(views).toEqual([
      { view_name: 'changed', dialect: 'duckdb', sql: "SELECT id, v FROM lake.conf.items WHERE v LIKE 'changed%'" },
    ]);
    expect((await run(api, 'select count(*) as n from reports.changed')).data).toEqual([{ n: 4 }]);

    for (let i = 3; i <= MAX_MERGES + 1; i++) await change(i);
    const compacted = await specRead(catalog.store, await catalog.currentSnapshot(), 'conf', 'items');
    expect(compacted).toMatchObject({ files: 1, deletes: 0 });
    await expectSameEverywhere(await catalog.currentSnapshot(), '');
    await expectSameEverywhere(early, ` AT (VERSION => ${early})`);
  }, 120_000);

  it("a table whose columns are named like DuckDB's position columns is rewritten whole, never merged wrong", async () => {
    await adminQuery(
      `UPDATE public.odd SET file_row_number = -1, file_index = 'changed', changed = '2030-01-01' WHERE id IN (3, 4)`,
      db.database,
    );
    await sync();
    const odd = await api.services.lake.tables.get(api.home.organization.id, 'conf', 'odd');
    // No delete files: the incremental sync compacted instead of merging.
    expect(odd?.snapshot.files.filter((f) => f.includes('/delete-'))).toEqual([]);
    const read = await run(
      api,
      "select count(*) as n, count(*) filter (where file_index = 'changed' and file_row_number = -1) as c, sum(id)::INTEGER as s from conf.odd",
    );
    expect(read.data).toEqual([{ n: 100, c: 2, s: 5050 }]);
  }, 60_000);
});
