import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPrivilegedConnection, quoteLiteral } from '../../src/service/engine/duckdb.js';
import { DuckLakeCatalog } from '../../src/service/storage/ducklake/catalog.js';
import type { CatalogColumn } from '../../src/service/storage/ducklake/catalog-types.js';
import {
  describeDataFile,
  fieldIdsOption,
  parquetSizes,
  tableRowsSql,
} from '../../src/service/storage/ducklake/data-files.js';
import { type MergeCounts, mergeChangedRows } from '../../src/service/storage/ducklake/merge.js';
import { columnShape } from '../../src/service/storage/ducklake/types.js';
import type { MetadataDb } from '../../src/service/store/metadata-db.js';
import { PostgresMetadataDb } from '../../src/service/store/postgres-db.js';
import { SqliteMetadataDb } from '../../src/service/store/sqlite-db.js';
import { ADMIN_URL, useTestDatabase } from '../helpers/postgres.js';

/** Incremental merges written as DuckLake says: changed rows in files of their own, replaced rows in delete files. */
const pg = useTestDatabase();

describe.each(['SQLite', 'PostgreSQL'])('an incremental merge into a DuckLake table, catalog in %s', (store) => {
  const dir = mkdtempSync(join(tmpdir(), 'lake-ducklake-merge-'));
  const tableDir = join(dir, 'tables', 'tbl_1');
  let db: MetadataDb;
  let prefix: string;
  let catalog: DuckLakeCatalog;
  let duck: Awaited<ReturnType<typeof openPrivilegedConnection>>;
  beforeAll(async () => {
    if (store === 'SQLite') {
      db = SqliteMetadataDb.open(join(dir, 'catalog.sqlite'));
      prefix = '';
    } else {
      const url = new URL(ADMIN_URL);
      url.pathname = `/${pg.database}`;
      db = PostgresMetadataDb.open(url.toString());
      prefix = 'ducklake_merge.';
    }
    catalog = new DuckLakeCatalog(db, prefix, 'catalog:org');
    await catalog.initialize(join(dir, 'tables'), 'lake test');
    duck = await openPrivilegedConnection({});
  });
  afterAll(async () => {
    duck.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const toAbsolute = (path: string): string => join(tableDir, path);
  const writeFile = async (path: string, sql: string, columns: readonly CatalogColumn[]) => {
    mkdirSync(join(toAbsolute(path), '..'), { recursive: true });
    await duck.connection.run(
      `COPY (${sql}) TO ${quoteLiteral(toAbsolute(path))} (FORMAT parquet, ${fieldIdsOption(columns)})`,
    );
    return describeDataFile(duck.connection, toAbsolute(path), path, columns);
  };
  const rowsAt = async (tableId: number, snapshot: number): Promise<[number, string][]> => {
    const files = await catalog.filesAt(tableId, snapshot);
    const sql = tableRowsSql(
      files,
      await catalog.columnsAt(tableId, snapshot),
      toAbsolute,
      await catalog.nameMappings(files.flatMap((f) => (f.mappingId === null ? [] : [f.mappingId]))),
    );
    return (await duck.connection.runAndReadAll(`SELECT id, v FROM (${sql}) ORDER BY id`))
      .getRows()
      .map(([id, v]) => [Number(id), String(v)]);
  };

  it('each merge replaces rows by key, earlier deletes kept, and every snapshot reads as it was', async () => {
    const shapes = [columnShape('id', 'BIGINT', false), columnShape('v', 'VARCHAR', true)];
    const base = await catalog.commit({}, async (w) => {
      const table = await w.table(await w.schema('shop'), 'items', 'tbl_1/', shapes);
      await w.addFiles(table.tableId, [
        await writeFile('s1/part-0.parquet', "SELECT range AS id, 'v1' AS v FROM range(10)", table.columns),
      ]);
      return table;
    });
    const { tableId, columns } = base.result;
    const merge = async (
      name: string,
      sql: string | undefined,
      presentKeys?: string,
    ): Promise<{ snapshotId: number; result: MergeCounts }> => {
      const before = await catalog.currentSnapshot();
      const current = await catalog.filesAt(tableId, before);
      return catalog.commit({}, async (w) =>
        mergeChangedRows({
          write: w,
          connection: duck.connection,
          // Files touched at once are written over two connections.
          connect: () => duck.connect(),
          tableId,
          columns,
          key: ['id'],
          current,
          mappings: new Map(),
          changed: sql === undefined ? [] : [await writeFile(`${name}/part-0.parquet`, sql, columns)],
          toAbsolute,
          deletesDir: name,
          ...(presentKeys ? { presentKeys } : {}),
        }),
      );
    };

    const first = await merge('s2', "SELECT unnest([2, 7, 10]) AS id, 'v2' AS v");
    expect(first.result).toEqual({ replaced: 2, deleted: 0 });
    const second = await merge('s3', "SELECT unnest([2, 3]) AS id, 'v3' AS v");
    // 2 was in the first merge's file now, 3 in the base file.
    expect(second.result).toEqual({ replaced: 2, deleted: 0 });

    const expected = (versions: Record<number, string>): [number, string][] =>
      Array.from({ length: 11 }, (_, id) => [id, versions[id] ?? 'v1'] as [number, string]).filter(
        ([id]) => id < 10 || versions[id],
      );
    expect(await rowsAt(tableId, base.snapshotId)).toEqual(expected({}));
    expect(await rowsAt(tableId, first.snapshotId)).toEqual(expected({ 2: 'v2', 7: 'v2', 10: 'v2' }));
    expect(await rowsAt(tableId, second.snapshotId)).toEqual(expected({ 2: 'v3', 3: 'v3', 7: 'v2', 10: 'v2' }));

    // The base file's delete file now lists every row it lost (2, 7 and then 3); the first merge's file lost its 2.
    const files = await catalog.filesAt(tableId, second.snapshotId);
    const positions = async (path: string | null): Promise<number[]> =>
      (
        await duck.connection.runAndReadAll(
          `SELECT pos FROM read_parquet(${quoteLiteral(toAbsolute(path as string))}) ORDER BY pos`,
        )
      )
        .getRows()
        .map(([pos]) => Number(pos));
    expect(await positions(files[0]?.deletePath ?? null)).toEqual([2, 3, 7]);
    expect(await positions(files[1]?.deletePath ?? null)).toEqual([0]);
    expect(files[2]?.deletePath).toBeNull();
    // Each delete file's size and footer size, as recorded, are what DuckDB reads in the file's own metadata.
    const recorded = await db.all<{ path: string; file_size_bytes: number; footer_size: number }>(
      `SELECT path, file_size_bytes, footer_size FROM ${prefix}ducklake_delete_file WHERE table_id = ? AND end_snapshot IS NULL`,
      [tableId],
    );
    expect(recorded).toHaveLength(2);
    for (const file of recorded) {
      const meta = (
        await duck.connection.runAndReadAll(
          `SELECT file_size_bytes, footer_size FROM parquet_file_metadata(${quoteLiteral(toAbsolute(file.path))})`,
        )
      ).getRowObjectsJS()[0];
      expect([Number(file.file_size_bytes), Number(file.footer_size)]).toEqual([
        Number(meta?.file_size_bytes),
        Number(meta?.footer_size),
      ]);
    }
    const stats = await db.get<{ record_count: number }>(
      `SELECT record_count FROM ${prefix}ducklake_table_stats WHERE table_id = ?`,
      [tableId],
    );
    expect(Number(stats?.record_count)).toBe(11);

    // Delete detection: the source has lost keys 0, 3 (changed before) and 10 (the first merge's file), and changed
    // 5; a key already deleted is not deleted twice, and a changed key is replaced, not counted as deleted.
    const present = 'SELECT unnest([1, 2, 4, 5, 6, 7, 8, 9])::BIGINT AS id';
    const third = await merge('s4', "SELECT 5::BIGINT AS id, 'v4' AS v", present);
    expect(third.result).toEqual({ replaced: 1, deleted: 3 });
    expect(await rowsAt(tableId, third.snapshotId)).toEqual([
      [1, 'v1'],
      [2, 'v3'],
      [4, 'v1'],
      [5, 'v4'],
      [6, 'v1'],
      [7, 'v2'],
      [8, 'v1'],
      [9, 'v1'],
    ]);
    // Deletes alone, no changed row: one more key gone, nothing added.
    const fourth = await merge('s5', undefined, 'SELECT unnest([1, 2, 4, 5, 6, 7, 8])::BIGINT AS id');
    expect(fourth.result).toEqual({ replaced: 0, deleted: 1 });
    expect((await rowsAt(tableId, fourth.snapshotId)).map(([id]) => id)).toEqual([1, 2, 4, 5, 6, 7, 8]);
    expect(await rowsAt(tableId, third.snapshotId)).toHaveLength(8);
  });

  it('a file that is not Parquet has no sizes to record', () => {
    const path = join(dir, 'not-parquet.parquet');
    writeFileSync(path, 'PAR1 but not a footer');
    expect(() => parquetSizes(path)).toThrow(/is not a Parquet file/);
  });
});
