import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPrivilegedConnection } from '../../src/service/engine/duckdb.js';
import { DuckLakeCatalog } from '../../src/service/storage/ducklake/catalog.js';
import { convertToDuckLake } from '../../src/service/storage/ducklake/convert-lake.js';
import { tableRowsSql } from '../../src/service/storage/ducklake/data-files.js';
import { duckdbTypeOf } from '../../src/service/storage/ducklake/types.js';
import { snapshotSource } from '../../src/service/storage/snapshot-sql.js';
import type { LakeTable } from '../../src/service/storage/tables.js';
import type { MetadataDb } from '../../src/service/store/metadata-db.js';
import { PostgresMetadataDb } from '../../src/service/store/postgres-db.js';
import { SqliteMetadataDb } from '../../src/service/store/sqlite-db.js';
import { ADMIN_URL, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * A lake as lake recorded it before DuckLake, converted into a DuckLake catalog: every table at every kept snapshot,
 * layered tables, a table taken out, and a view, read back the specification's way and compared in DuckDB with
 * what lake itself reads, value for value.
 */
describe('converting a lake to DuckLake', () => {
  let api: Harness;
  let pg: TestDatabase;
  let org: string;
  let firstItems: LakeTable;
  const dir = mkdtempSync(join(tmpdir(), 'lake-ducklake-convert-'));
  beforeAll(async () => {
    api = await inMemory.start();
    pg = await createTestDatabase();
    org = api.home.organization.id;
    const lake = api.services.lake;
    await lake.catalogFile(org); // the demo tables
    await lake.writeTable(org, 'shop', 'items', "SELECT range AS id, 'first' AS v FROM range(10)");
    firstItems = (await lake.tables.get(org, 'shop', 'items'))!;
    await lake.writeTable(org, 'shop', 'items', "SELECT range AS id, 'second' AS v, range * 2 AS n FROM range(20)");
    await lake.writeTable(org, 'shop', 'events', 'SELECT range AS id, range AS x FROM range(50)');
    await lake.writeTable(org, 'shop', 'events', 'SELECT unnest([3, 60]) AS id, 0 AS x', {
      layerOn: { previous: (await lake.tables.get(org, 'shop', 'events'))!, key: ['id'] },
    });
    await lake.writeTable(
      org,
      'shop',
      'nested',
      "SELECT range AS id, [range, range + 1] AS l, {'a': range, 'b c': 'x'} AS s, MAP {'k': range} AS m, 'ok' AS mood FROM range(3)",
      { columnTypes: { mood: "ENUM('ok', 'sad')" } },
    );
    await lake.writeTable(org, 'shop', 'gone', 'SELECT 1 AS id');
    await lake.tables.retire(org, 'shop', 'gone');
    await lake.createView(org, 'reports', 'busy', 'SELECT id FROM lake.shop.events WHERE x > 10');
  }, 60_000);
  afterAll(async () => {
    await api.close();
    await pg?.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  const stores: [string, () => { db: MetadataDb; prefix: string }][] = [
    ['SQLite', () => ({ db: SqliteMetadataDb.open(join(dir, 'ducklake.sqlite')), prefix: '' })],
    [
      'PostgreSQL',
      () => {
        const url = new URL(ADMIN_URL);
        url.pathname = `/${pg.database}`;
        return { db: PostgresMetadataDb.open(url.toString()), prefix: 'ducklake_converted.' };
      },
    ],
  ];

  for (const [storeName, open] of stores)
    it(`${storeName}: keeps every table, every kept snapshot in order, what was taken out, and the views`, async () => {
      const lake = api.services.lake;
      const { db, prefix } = open();
      const catalog = new DuckLakeCatalog(db, prefix, 'catalog:org');
      await catalog.initialize(lake.layout.tablesDir(org), 'lake test');
      const { connection, close } = await openPrivilegedConnection({});
      try {
        const written = await convertToDuckLake({
          organizationId: org,
          tables: lake.tables,
          views: lake.views,
          layout: lake.layout,
          catalog,
          connection,
        });
        expect(written).toBeGreaterThanOrEqual(8);
        // Converting again finds the catalog written and changes nothing.
        expect(
          await convertToDuckLake({
            organizationId: org,
            tables: lake.tables,
            views: lake.views,
            layout: lake.layout,
            catalog,
            connection,
          }),
        ).toBe(0);

        const now = await catalog.currentSnapshot();
        const tablesNow = await catalog.tablesAt(now);
        const current = await lake.tables.list(org);
        expect(tablesNow.map((t) => `${t.schema}.${t.name}`)).toEqual(current.map((t) => `${t.schema}.${t.name}`));
        const through = async (tableId: number, path: string, snapshot: number): Promise<string> => {
          const files = await catalog.filesAt(tableId, snapshot);
          return tableRowsSql(
            files,
            await catalog.columnsAt(tableId, snapshot),
            (file) => join(lake.layout.tablesDir(org), path, file),
            await catalog.nameMappings(files.flatMap((f) => (f.mappingId === null ? [] : [f.mappingId]))),
          );
        };
        const differences = async (a: string, b: string): Promise<number> =>
          Number(
            (
              await connection.runAndReadAll(
                `SELECT (SELECT count(*) FROM ((${a}) EXCEPT ALL (${b}))) + (SELECT count(*) FROM ((${b}) EXCEPT ALL (${a}))) AS n`,
              )
            ).getRowObjectsJS()[0]?.n,
          );
        for (const table of current) {
          const inCatalog = tablesNow.find((t) => t.schema === table.schema && t.name === table.name)!;
          const sql = await through(inCatalog.tableId, inCatalog.path, now);
          expect(
            await differences(
              sql,
              snapshotSource(table.snapshot, (f) => lake.layout.toAbsolute(f)),
            ),
            table.name,
          ).toBe(0);
        }
        const nested = tablesNow.find((t) => t.name === 'nested')!;
        const nestedColumns = await catalog.columnsAt(nested.tableId, now);
        expect(nestedColumns.map((c) => [c.name, c.type, duckdbTypeOf(c)])).toEqual([
          ['id', 'int64', 'BIGINT'],
          ['l', 'list', 'BIGINT[]'],
          ['s', 'struct', 'STRUCT("a" BIGINT, "b c" VARCHAR)'],
          ['m', 'map', 'MAP(VARCHAR, BIGINT)'],
          ['mood', 'varchar', "ENUM('ok', 'sad')"],
        ]);
        const events = tablesNow.find((t) => t.name === 'events')!;
        expect(
          Number(
            (
              await connection.runAndReadAll(
                `SELECT count(*) AS n FROM (${await through(events.tableId, events.path, now)})`,
              )
            ).getRowObjectsJS()[0]?.n,
          ),
        ).toBe(51);

        // Time travel: the snapshot where shop.items was first written reads its first rows, and shop.gone is there.
        const snapshots = await db.all<{ snapshot_id: number; commit_message: string }>(
          `SELECT snapshot_id, commit_message FROM ${prefix}ducklake_snapshot_changes ORDER BY snapshot_id`,
        );
        const firstAt = snapshots.find(
          (s) => s.commit_message === `converted: lake snapshot ${firstItems.snapshot.id}`,
        )!.snapshot_id;
        const items = (await catalog.tablesAt(firstAt)).find((t) => t.name === 'items')!;
        expect(
          await differences(
            await through(items.tableId, items.path, firstAt),
            snapshotSource(firstItems.snapshot, (f) => lake.layout.toAbsolute(f)),
          ),
        ).toBe(0);
        const droppedAt = snapshots.find((s) => s.commit_message === 'converted: shop.gone taken out')!.snapshot_id;
        expect((await catalog.tablesAt(droppedAt)).map((t) => t.name)).not.toContain('gone');
        expect((await catalog.tablesAt(droppedAt - 1)).map((t) => t.name)).toContain('gone');
        expect((await catalog.viewsAt(now)).map((v) => [`${v.schema}.${v.name}`, v.sql])).toEqual([
          ['reports.busy', 'SELECT id FROM lake.shop.events WHERE x > 10'],
        ]);
      } finally {
        close();
        await db.close();
      }
    });
});
