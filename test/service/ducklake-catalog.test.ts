import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckLakeCatalog } from '../../src/service/storage/ducklake/catalog.js';
import type { MetadataDb } from '../../src/service/store/metadata-db.js';
import { PostgresMetadataDb } from '../../src/service/store/postgres-db.js';
import { SqliteMetadataDb } from '../../src/service/store/sqlite-db.js';
import { ADMIN_URL, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

const COLUMNS = [
  { name: 'id', type: 'int64', nullable: false },
  { name: 'status', type: 'varchar', nullable: true },
];
const file = (path: string, recordCount: number) => ({
  path,
  recordCount,
  fileSizeBytes: 100 * recordCount,
  footerSize: 50,
});

/** One organization's DuckLake catalog, written by lake's commits and read with the spec's queries, in both stores. */
describe('the DuckLake catalog', () => {
  let pgDatabase: TestDatabase;
  const dir = mkdtempSync(join(tmpdir(), 'lake-ducklake-catalog-'));
  /** Each store opens one catalog by its key: the same key gives another connection to the same catalog. */
  const stores: { name: string; open: (key: string) => { db: MetadataDb; prefix: string } }[] = [
    {
      name: 'SQLite (a file of its own)',
      open: (key) => ({ db: SqliteMetadataDb.open(join(dir, `${key}.sqlite`)), prefix: '' }),
    },
    {
      name: 'PostgreSQL (a schema of the metadata database)',
      open: (key) => {
        const url = new URL(ADMIN_URL);
        url.pathname = `/${pgDatabase.database}`;
        return { db: PostgresMetadataDb.open(url.toString()), prefix: `ducklake_${key}.` };
      },
    },
  ];
  beforeAll(async () => {
    pgDatabase = await createTestDatabase();
  }, 60_000);
  afterAll(async () => {
    await pgDatabase?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const store of stores) {
    describe(store.name, () => {
      let db: MetadataDb;
      let prefix: string;
      let catalog: DuckLakeCatalog;
      const key = `org_${Math.random().toString(36).slice(2, 8)}`;
      beforeAll(async () => {
        const opened = store.open(key);
        db = opened.db;
        prefix = opened.prefix;
        catalog = new DuckLakeCatalog(db, opened.prefix, 'catalog:org_test');
        await catalog.initialize('/lake/org_test/tables', 'lake test');
        // Initializing twice changes nothing.
        await catalog.initialize('/lake/org_test/tables', 'lake test');
      });
      afterAll(async () => {
        await db.close();
      });

      it('starts as the extension starts one: snapshot 0, schema main, version 1.0 and the data path', async () => {
        expect(await catalog.currentSnapshot()).toBe(0);
        expect(await catalog.metadata('version')).toBe('1.0');
        expect(await catalog.metadata('data_path')).toBe('/lake/org_test/tables/');
        expect(await catalog.tablesAt(0)).toEqual([]);
      });

      it('commits a table, replaces its files, and reads every snapshot as it was', async () => {
        const first = await catalog.commit({ author: 'sync_1' }, async (write) => {
          const schema = await write.schema('shop');
          const { tableId, columns } = await write.table(schema, 'orders', 'tbl_1/', COLUMNS);
          expect(columns.map((c) => c.id)).toEqual([1, 2]);
          await write.addFiles(tableId, [file('s1/part-0.parquet', 10), file('s1/part-1.parquet', 5)]);
          return tableId;
        });
        expect(first.snapshotId).toBe(1);
        const tableId = first.result;
        expect(await catalog.tablesAt(1)).toEqual([{ tableId, schema: 'shop', name: 'orders', path: 'tbl_1/' }]);

        // A full sync: new files, and a column added; the kept columns keep their ids.
        const second = await catalog.commit({}, async (write) => {
          const schema = await write.schema('shop');
          const { columns } = await write.table(schema, 'orders', 'tbl_1/', [
            ...COLUMNS,
            { name: 'total', type: 'decimal(12,2)', nullable: true },
          ]);
          expect(columns.map((c) => [c.name, c.id])).toEqual([
            ['id', 1],
            ['status', 2],
            ['total', 3],
          ]);
          await write.replaceFiles(tableId, [file('s2/part-0.parquet', 20)]);
        });
        expect(second.snapshotId).toBe(2);
        expect((await catalog.filesAt(tableId, 1)).map((f) => f.path)).toEqual([
          's1/part-0.parquet',
          's1/part-1.parquet',
        ]);
        expect((await catalog.filesAt(tableId, 2)).map((f) => f.path)).toEqual(['s2/part-0.parquet']);
        expect((await catalog.columnsAt(tableId, 1)).map((c) => c.name)).toEqual(['id', 'status']);
        expect((await catalog.columnsAt(tableId, 2)).map((c) => c.name)).toEqual(['id', 'status', 'total']);

        // An incremental merge: a new file, and a delete file for rows of the old one.
        await catalog.commit({}, async (write) => {
          const [added] = await write.addFiles(tableId, [file('s3/part-0.parquet', 2)]);
          expect(added).toBeGreaterThan(0);
          const [old] = await catalog.filesAt(tableId, 2);
          await write.setDeletes(
            tableId,
            old?.dataFileId as number,
            { path: 's3/delete-0.parquet', deleteCount: 2, fileSizeBytes: 40, footerSize: 20 },
            2,
          );
        });
        expect(await catalog.filesAt(tableId, 3)).toEqual([
          expect.objectContaining({ path: 's2/part-0.parquet', deletePath: 's3/delete-0.parquet' }),
          expect.objectContaining({ path: 's3/part-0.parquet', deletePath: null }),
        ]);
        expect((await catalog.filesAt(tableId, 2))[0]?.deletePath).toBeNull();
        const changes = await db.all<{ snapshot_id: number; changes_made: string }>(
          `SELECT snapshot_id, changes_made FROM ${prefix}ducklake_snapshot_changes ORDER BY snapshot_id`,
        );
        expect(changes.map((c) => c.changes_made)).toEqual([
          'created_schema:"main"',
          `created_schema:"shop",created_table:"shop"."orders",inserted_into_table:${tableId}`,
          `altered_table:${tableId},inserted_into_table:${tableId}`,
          `inserted_into_table:${tableId},deleted_from_table:${tableId}`,
        ]);
      });

      it('writes a schema version per table whose schema a snapshot began, and puts right an older catalog on open', async () => {
        const versions = () =>
          db.all<{ begin_snapshot: number; schema_version: number; table_id: number | null }>(
            `SELECT begin_snapshot, schema_version, table_id FROM ${prefix}ducklake_schema_versions ORDER BY begin_snapshot, table_id`,
          );
        const snapshots = await db.all<{ snapshot_id: number; schema_version: number }>(
          `SELECT snapshot_id, schema_version FROM ${prefix}ducklake_snapshot ORDER BY snapshot_id`,
        );
        const versionOf = (snapshot: number) =>
          Number(snapshots.find((s) => Number(s.snapshot_id) === snapshot)?.schema_version);
        const [orders] = await catalog.tablesAt(3);
        const tableId = orders?.tableId as number;
        // Created at 1, a column added at 2, only files at 3: as the extension, a row for each of the first two.
        expect((await versions()).map((v) => [Number(v.begin_snapshot), Number(v.schema_version), v.table_id])).toEqual(
          [
            [1, versionOf(1), tableId],
            [2, versionOf(2), tableId],
          ],
        );
        // An earlier build wrote one row per schema change, without a table.
        await db.run(`DELETE FROM ${prefix}ducklake_schema_versions`);
        await db.run(`INSERT INTO ${prefix}ducklake_schema_versions VALUES (1, ?, NULL), (2, ?, NULL)`, [
          versionOf(1),
          versionOf(2),
        ]);
        await new DuckLakeCatalog(db, prefix, 'catalog:org_test').initialize('/lake/org_test/tables', 'lake test');
        expect((await versions()).map((v) => [Number(v.begin_snapshot), Number(v.schema_version), v.table_id])).toEqual(
          [
            [1, versionOf(1), tableId],
            [2, versionOf(2), tableId],
          ],
        );
      });

      it('a commit that fails leaves the catalog at the snapshot before it', async () => {
        const before = await catalog.currentSnapshot();
        await expect(
          catalog.commit({}, async (write) => {
            await write.schema('half');
            throw new Error('killed halfway');
          }),
        ).rejects.toThrow('killed halfway');
        expect(await catalog.currentSnapshot()).toBe(before);
        expect((await catalog.tablesAt(before)).map((t) => t.schema)).not.toContain('half');
      });

      it("writes every change as the extension parses it, and puts right an older catalog's changes on open", async () => {
        const before = await catalog.currentSnapshot();
        await catalog.commit({}, async (write) => {
          const schema = await write.schema('we"ird, schema');
          await write.table(schema, 'a "b", c', 'odd_1/', COLUMNS);
          await write.view(schema, 'v"1', 'SELECT 1');
        });
        const rows = async (): Promise<string[]> =>
          (
            await db.all<{ changes_made: string }>(
              `SELECT changes_made FROM ${prefix}ducklake_snapshot_changes WHERE snapshot_id > ? ORDER BY snapshot_id`,
              [before],
            )
          ).map((r) => r.changes_made);
        expect(await rows()).toEqual([
          'created_schema:"we""ird, schema",created_table:"we""ird, schema"."a ""b"", c",created_view:"we""ird, schema"."v""1"',
        ]);
        const all = await db.all<{ changes_made: string }>(
          `SELECT changes_made FROM ${prefix}ducklake_snapshot_changes`,
        );
        for (const { changes_made } of all) expect(() => parseAsTheExtension(changes_made), changes_made).not.toThrow();
        // A catalog an earlier build wrote named created tables and views without their schema.
        await db.run(`UPDATE ${prefix}ducklake_snapshot_changes SET changes_made = ? WHERE snapshot_id = ?`, [
          'created_schema:"we""ird, schema",created_table:"a ""b"", c",created_view:"v""1"',
          before + 1,
        ]);
        await new DuckLakeCatalog(db, prefix, 'catalog:org_test').initialize('/lake/org_test/tables', 'lake test');
        expect(await rows()).toEqual([
          'created_schema:"we""ird, schema",created_table:"we""ird, schema"."a ""b"", c",created_view:"we""ird, schema"."v""1"',
        ]);
        expect(await catalog.snapshotsChanging('we"ird, schema', 'a "b", c')).toContain(before + 1);
        expect(await catalog.snapshotsChanging('other', 'a "b", c')).not.toContain(before + 1);
      });

      it('commits racing each other get consecutive snapshot ids, and none is lost', async () => {
        const before = await catalog.currentSnapshot();
        // Another connection to the same catalog: another replica on PostgreSQL, another process on SQLite.
        const other = store.open(key);
        const racer = new DuckLakeCatalog(other.db, other.prefix, 'catalog:org_test');
        const ids = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            (i % 2 === 0 ? catalog : racer).commit({}, async (write) => {
              const schema = await write.schema('race');
              await write.table(schema, `t${i}`, `race_${i}/`, COLUMNS);
            }),
          ),
        );
        await other.db.close();
        expect(ids.map((r) => r.snapshotId).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6].map((n) => before + n));
        expect((await catalog.tablesAt(before + 6)).filter((t) => t.schema === 'race')).toHaveLength(6);
      });
    });
  }
});

/**
 * The grammar the DuckLake extension (v1.5-variegata, ducklake_transaction_changes.cpp) reads changes_made with:
 * entries split on commas outside quotes, `type:value`; a created table or view is `"schema"."name"`, a created
 * schema `"name"`, anything else an id. Throws where the extension would.
 */
function parseAsTheExtension(changesMade: string): void {
  const quoted = (text: string, at: number): number => {
    if (text[at] !== '"') throw new Error(`expected a quote at ${at} of ${text}`);
    for (let i = at + 1; i < text.length; i++)
      if (text[i] === '"') {
        if (text[i + 1] === '"') i++;
        else return i + 1;
      }
    throw new Error(`unterminated quote in ${text}`);
  };
  const entries: string[] = [];
  let start = 0;
  let inQuotes = false;
  for (let i = 0; i <= changesMade.length; i++) {
    if (i === changesMade.length || (!inQuotes && changesMade[i] === ',')) {
      entries.push(changesMade.slice(start, i));
      start = i + 1;
    } else if (changesMade[i] === '"') inQuotes = !inQuotes;
  }
  for (const entry of entries) {
    const colon = entry.indexOf(':');
    const [type, value] = [entry.slice(0, colon), entry.slice(colon + 1)];
    if (type === 'created_table' || type === 'created_view') {
      const dot = quoted(value, 0);
      if (value[dot] !== '.') throw new Error(`expected a dot in ${entry}`);
      if (quoted(value, dot + 1) !== value.length) throw new Error(`trailing data in ${entry}`);
    } else if (type === 'created_schema') {
      if (quoted(value, 0) !== value.length) throw new Error(`trailing data in ${entry}`);
    } else if (!/^\d+$/.test(value)) throw new Error(`expected an id in ${entry}`);
  }
}
