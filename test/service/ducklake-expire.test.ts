import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckLakeCatalog } from '../../src/service/storage/ducklake/catalog.js';
import { expireSnapshots, takeScheduledFiles } from '../../src/service/storage/ducklake/expire.js';
import { columnShape } from '../../src/service/storage/ducklake/types.js';
import type { MetadataDb } from '../../src/service/store/metadata-db.js';
import { PostgresMetadataDb } from '../../src/service/store/postgres-db.js';
import { SqliteMetadataDb } from '../../src/service/store/sqlite-db.js';
import { ADMIN_URL, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

const file = (path: string) => ({ path, recordCount: 1, fileSizeBytes: 10, footerSize: 5 });

/** Retention on the DuckLake catalog: expired snapshots, files scheduled for deletion, then taken for removal. */
describe('expiring DuckLake snapshots', () => {
  let pg: TestDatabase;
  const dir = mkdtempSync(join(tmpdir(), 'lake-ducklake-expire-'));
  beforeAll(async () => {
    pg = await createTestDatabase();
  }, 60_000);
  afterAll(async () => {
    await pg?.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  const stores: [string, () => { db: MetadataDb; prefix: string }][] = [
    ['SQLite', () => ({ db: SqliteMetadataDb.open(join(dir, 'c.sqlite')), prefix: '' })],
    [
      'PostgreSQL',
      () => {
        const url = new URL(ADMIN_URL);
        url.pathname = `/${pg.database}`;
        return { db: PostgresMetadataDb.open(url.toString()), prefix: 'ducklake_expire.' };
      },
    ],
  ];

  for (const [name, open] of stores) {
    it(`${name}: files only expired snapshots read are scheduled, then taken; live readers and the current snapshot are kept`, async () => {
      const { db, prefix } = open();
      const catalog = new DuckLakeCatalog(db, prefix, 'catalog:org');
      const access = { db, prefix };
      try {
        await catalog.initialize(join(dir, 'tables'), 'lake test');
        let tableId = 0;
        for (const n of [1, 2, 3]) {
          await catalog.commit({ at: new Date(Date.now() - (4 - n) * 3_600_000) }, async (w) => {
            const table = await w.table(await w.schema('shop'), 'items', 'tbl_1/', [
              columnShape('id', 'BIGINT', false),
            ]);
            tableId = table.tableId;
            await w.replaceFiles(table.tableId, [file(`s${n}/part-0.parquet`)]);
          });
        }
        // Snapshots 1-3 are 3, 2 and 1 hours old; a live query still reads snapshot 2.
        const olderThan = new Date(Date.now() - 30 * 60_000);
        expect(await expireSnapshots(catalog, access, { olderThan, oldestLiveSnapshot: 2 })).toBe(2);
        expect((await catalog.filesAt(tableId, 2)).map((f) => f.path)).toEqual(['s2/part-0.parquet']);
        expect(await takeScheduledFiles(catalog, access, new Date())).toEqual(['tbl_1/s1/part-0.parquet']);
        // The query ended: everything before the current snapshot goes; its files are all that is left.
        expect(await expireSnapshots(catalog, access, { olderThan })).toBe(1);
        expect(await catalog.currentSnapshot()).toBe(3);
        expect((await catalog.filesAt(tableId, 3)).map((f) => f.path)).toEqual(['s3/part-0.parquet']);
        expect(await takeScheduledFiles(catalog, access, new Date())).toEqual(['tbl_1/s2/part-0.parquet']);
        expect(await takeScheduledFiles(catalog, access, new Date())).toEqual([]);
        // Nothing is older than the window now: nothing expires.
        expect(await expireSnapshots(catalog, access, { olderThan })).toBe(0);

        // A dropped table, once no kept snapshot has it, leaves nothing behind: files scheduled, statistics gone.
        await catalog.commit({}, async (w) => w.dropTable(tableId));
        expect(await expireSnapshots(catalog, access, { olderThan: new Date(Date.now() + 60_000) })).toBe(1);
        expect(await takeScheduledFiles(catalog, access, new Date(Date.now() + 60_000))).toEqual([
          'tbl_1/s3/part-0.parquet',
        ]);
        for (const table of ['ducklake_table', 'ducklake_column', 'ducklake_data_file', 'ducklake_table_stats'])
          expect(
            await db.get<{ n: number }>(`SELECT count(*) AS n FROM ${prefix}${table} WHERE table_id = ?`, [tableId]),
            table,
          ).toMatchObject({ n: 0 });
      } finally {
        await db.close();
      }
    });
  }
});
