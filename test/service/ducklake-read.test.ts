import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPrivilegedConnection, quoteLiteral } from '../../src/service/engine/duckdb.js';
import { DuckLakeCatalog } from '../../src/service/storage/ducklake/catalog.js';
import { describeDataFile, fieldIdsOption, tableRowsSql } from '../../src/service/storage/ducklake/data-files.js';
import { columnShape, ducklakeType, duckdbTypeOf } from '../../src/service/storage/ducklake/types.js';
import { SqliteMetadataDb } from '../../src/service/store/sqlite-db.js';

type Row = Record<string, unknown>;

/**
 * Data files lake writes for the DuckLake catalog (field ids, statistics), and a table read back at two snapshots
 * the way the specification tells a reader to: files at the snapshot, columns by id, less the delete files' rows.
 */
describe('DuckLake data files, read through the catalog', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lake-ducklake-read-'));
  const dataPath = join(dir, 'tables');
  let db: SqliteMetadataDb;
  let catalog: DuckLakeCatalog;
  let connection: Awaited<ReturnType<typeof openPrivilegedConnection>>;
  beforeAll(async () => {
    db = SqliteMetadataDb.open(join(dir, 'catalog.sqlite'));
    catalog = new DuckLakeCatalog(db, '', 'catalog:org');
    await catalog.initialize(dataPath, 'lake test');
    connection = await openPrivilegedConnection({});
  });
  afterAll(async () => {
    connection.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const rowsAt = async (tableId: number, tablePath: string, snapshot: number): Promise<Row[]> => {
    const files = await catalog.filesAt(tableId, snapshot);
    const columns = await catalog.columnsAt(tableId, snapshot);
    const sql = tableRowsSql(files, columns, (path) => join(dataPath, tablePath, path));
    return (await connection.connection.runAndReadAll(`SELECT * FROM (${sql}) ORDER BY id`)).getRowObjectsJS();
  };

  it('nested columns: ids for every child, field ids in the file, and the values read back whole', async () => {
    const shapes = [
      columnShape('id', 'BIGINT', false),
      columnShape('tags', 'VARCHAR[]', true),
      columnShape('point', 'STRUCT("x" DOUBLE, "y z" DOUBLE)', true),
      columnShape('attrs', 'MAP(VARCHAR, INTEGER)', true),
    ];
    const tablePath = 'tbl_nested/';
    const { result, snapshotId } = await catalog.commit({}, async (w) => {
      const table = await w.table(await w.schema('shop'), 'shapes', tablePath, shapes);
      expect(table.columns.map((c) => [c.name, c.id, (c.children ?? []).map((k) => k.id)])).toEqual([
        ['id', 1, []],
        ['tags', 2, [3]],
        ['point', 4, [5, 6]],
        ['attrs', 7, [8, 9]],
      ]);
      const absolute = join(dataPath, tablePath, 's1/part-0.parquet');
      mkdirSync(join(absolute, '..'), { recursive: true });
      await connection.connection.run(
        `COPY (SELECT 1::BIGINT AS id, ['a', 'b'] AS tags, {'x': 1.5, 'y z': 2.5} AS point, MAP {'k': 7} AS attrs) TO ${quoteLiteral(absolute)} (FORMAT parquet, ${fieldIdsOption(table.columns)})`,
      );
      const fieldIds = (
        await connection.connection.runAndReadAll(
          `SELECT name, field_id FROM parquet_schema(${quoteLiteral(absolute)}) WHERE field_id IS NOT NULL`,
        )
      ).getRows();
      expect(fieldIds.map(([name, id]) => `${String(name)}=${Number(id)}`)).toEqual([
        'id=1',
        'tags=2',
        'element=3',
        'point=4',
        'x=5',
        'y z=6',
        'attrs=7',
        'key=8',
        'value=9',
      ]);
      await w.addFiles(table.tableId, [
        await describeDataFile(connection.connection, absolute, 's1/part-0.parquet', table.columns),
      ]);
      return table.tableId;
    });
    const columns = await catalog.columnsAt(result, snapshotId);
    expect(columns.map((c) => duckdbTypeOf(c))).toEqual([
      'BIGINT',
      'VARCHAR[]',
      'STRUCT("x" DOUBLE, "y z" DOUBLE)',
      'MAP(VARCHAR, INTEGER)',
    ]);
    const rows = await rowsAt(result, tablePath, snapshotId);
    expect(rows).toEqual([
      { id: 1n, tags: ['a', 'b'], point: { x: 1.5, 'y z': 2.5 }, attrs: [{ key: 'k', value: 7 }] },
    ]);
  });

  it('a full write, then a merge of changed rows as a new file and a delete file, each snapshot as it was', async () => {
    const columns = [
      { name: 'id', type: ducklakeType('BIGINT'), nullable: false },
      { name: 'status', type: ducklakeType('VARCHAR'), nullable: true },
      { name: 'total', type: ducklakeType('DECIMAL(12,2)'), nullable: true },
    ];
    const tablePath = 'tbl_1/';
    const write = async (relative: string, sql: string, ids: Parameters<typeof fieldIdsOption>[0]): Promise<string> => {
      const absolute = join(dataPath, tablePath, relative);
      mkdirSync(join(absolute, '..'), { recursive: true });
      await connection.connection.run(
        `COPY (${sql}) TO ${quoteLiteral(absolute)} (FORMAT parquet, COMPRESSION zstd, ${fieldIdsOption(ids)})`,
      );
      return absolute;
    };

    const first = await catalog.commit({}, async (w) => {
      const schema = await w.schema('shop');
      const table = await w.table(schema, 'orders', tablePath, columns);
      const path = await write(
        's1/part-0.parquet',
        "SELECT range AS id, 'new' AS status, CAST(range * 1.5 AS DECIMAL(12,2)) AS total FROM range(10)",
        table.columns,
      );
      const described = await describeDataFile(connection.connection, path, 's1/part-0.parquet', table.columns);
      expect(described).toMatchObject({ recordCount: 10, footerSize: expect.any(Number) });
      expect(described.columnStats?.find((s) => s.columnId === 1)).toMatchObject({ min: '0', max: '9', nullCount: 0 });
      expect(described.columnStats?.find((s) => s.columnId === 3)).toMatchObject({ min: '0.00', max: '13.50' });
      await w.addFiles(table.tableId, [described]);
      return table;
    });
    const { tableId } = first.result;
    const before = await rowsAt(tableId, tablePath, first.snapshotId);
    expect(before).toHaveLength(10);
    expect(before[3]).toEqual({ id: 3n, status: 'new', total: expect.anything() });

    // Rows 2 and 7 changed at the source, and 10 is new: one file of changed rows, and the old rows' positions.
    const merged = await catalog.commit({}, async (w) => {
      const table = await w.table(await w.schema('shop'), 'orders', tablePath, columns);
      const path = await write(
        's2/part-0.parquet',
        "SELECT * FROM (VALUES (2, 'paid', 3.00), (7, 'paid', 10.50), (10, 'new', 15.00)) v(id, status, total)",
        table.columns,
      );
      await w.addFiles(tableId, [
        await describeDataFile(connection.connection, path, 's2/part-0.parquet', table.columns),
      ]);
      const [old] = await catalog.filesAt(tableId, first.snapshotId);
      const deletes = join(dataPath, tablePath, 's2/delete-0.parquet');
      await connection.connection.run(
        `COPY (SELECT ${quoteLiteral(join(dataPath, tablePath, old?.path as string))} AS file_path, CAST(pos AS BIGINT) AS pos FROM (VALUES (2), (7)) p(pos)) TO ${quoteLiteral(deletes)} (FORMAT parquet)`,
      );
      await w.setDeletes(
        tableId,
        old?.dataFileId as number,
        { path: 's2/delete-0.parquet', deleteCount: 2, fileSizeBytes: 1, footerSize: 1 },
        2,
      );
    });
    const after = await rowsAt(tableId, tablePath, merged.snapshotId);
    expect(after.map((r) => Number(r.id))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(after.filter((r) => r.status === 'paid').map((r) => Number(r.id))).toEqual([2, 7]);
    // The earlier snapshot reads as it was.
    expect(await rowsAt(tableId, tablePath, first.snapshotId)).toEqual(before);
  });
});
