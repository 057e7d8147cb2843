import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPrivilegedConnection } from '../../src/service/engine/duckdb.js';
import { DuckLakeCatalog } from '../../src/service/storage/ducklake/catalog.js';
import { tableRowsSql } from '../../src/service/storage/ducklake/data-files.js';
import { registerLegacySnapshot } from '../../src/service/storage/ducklake/legacy-snapshot.js';
import { ducklakeType } from '../../src/service/storage/ducklake/types.js';
import { layersOf } from '../../src/service/storage/snapshot-sql.js';
import { SqliteMetadataDb } from '../../src/service/store/sqlite-db.js';
import { run } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * A table as lake stored it before DuckLake (Parquet without field ids, incremental layers replacing rows by key)
 * registered in a DuckLake catalog without rewriting its files: read the specification's way, it holds exactly
 * the rows lake's queries return.
 */
describe('registering a table lake wrote before DuckLake', () => {
  let api: Harness;
  const dir = mkdtempSync(join(tmpdir(), 'lake-ducklake-legacy-'));
  beforeAll(async () => {
    api = await inMemory.start();
  });
  afterAll(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a layered table reads the same through the catalog, less the rows later layers replaced', async () => {
    const org = api.home.organization.id;
    const lake = api.services.lake;
    await lake.writeTable(org, 'shop', 'items', "SELECT range AS id, 'v1' AS v, range * 2 AS n FROM range(100)");
    for (const [ids, version] of [
      ['5, 50, 150', 'v2'],
      ['5, 200', 'v3'],
    ] as const) {
      const previous = await lake.tables.get(org, 'shop', 'items');
      await lake.writeTable(
        org,
        'shop',
        'items',
        `SELECT id, '${version}' AS v, id * 2 AS n FROM (SELECT unnest([${ids}]) AS id)`,
        { layerOn: { previous: previous!, key: ['id'] } },
      );
    }
    const table = (await lake.tables.get(org, 'shop', 'items'))!;
    expect(layersOf(table.snapshot)).toHaveLength(3);
    const expected = (await run(api, 'SELECT id, v, n FROM shop.items ORDER BY id')).data as Record<string, unknown>[];
    expect(expected).toHaveLength(102);

    const db = SqliteMetadataDb.open(join(dir, 'catalog.sqlite'));
    const catalog = new DuckLakeCatalog(db, '', 'catalog:org');
    const dataPath = lake.layout.tablesDir(org);
    const tableDir = join(dataPath, table.id);
    await catalog.initialize(dataPath, 'lake test');
    const { connection, close } = await openPrivilegedConnection({});
    try {
      const toTable = (homeRelative: string): string => relative(tableDir, lake.layout.toAbsolute(homeRelative));
      const { result: tableId, snapshotId } = await catalog.commit({ message: 'converted' }, async (write) => {
        const schema = await write.schema('shop');
        const created = await write.table(
          schema,
          'items',
          `${table.id}/`,
          table.snapshot.columns.map((c) => ({ name: c.name, type: ducklakeType(c.type), nullable: c.nullable })),
        );
        await registerLegacySnapshot(
          write,
          connection,
          created,
          { layers: layersOf(table.snapshot).map((layer) => layer.map(toTable)), mergeKey: table.snapshot.mergeKey },
          { toAbsolute: (path) => join(tableDir, path), deletesDir: 'converted' },
        );
        return created.tableId;
      });
      const files = await catalog.filesAt(tableId, snapshotId);
      // The base file lost 5 and 50 to later layers; the first layer lost 5 to the last.
      expect(files.map((f) => f.deletePath !== null)).toEqual([true, true, false]);
      const sql = tableRowsSql(
        files,
        await catalog.columnsAt(tableId, snapshotId),
        (path) => join(tableDir, path),
        await catalog.nameMappings(files.map((f) => f.mappingId as number)),
      );
      const read = (await connection.runAndReadAll(`SELECT id, v, n FROM (${sql}) ORDER BY id`)).getRowObjectsJS();
      expect(read.map((r) => ({ id: Number(r.id), v: r.v, n: Number(r.n) }))).toEqual(
        expected.map((r) => ({ id: Number(r.id), v: r.v, n: Number(r.n) })),
      );
    } finally {
      close();
      await db.close();
    }
  });
});
