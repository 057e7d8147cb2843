#!/usr/bin/env node
// What a DuckLake commit costs lake's metadata store (not a timed test; issue 32's target: at most 20 ms per table
// on SQLite): N commits, each replacing one table's files (a full sync's commit: a snapshot, its changes, the
// table's files ended and one new file with per-column statistics), on SQLite and on PostgreSQL.
// Usage: node bench/ducklake-commit.mjs [commits]   (default 200; PostgreSQL from LAKE_TEST_PG_URL)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const load = (path) => import(join(root, 'dist', path));
const { DuckLakeCatalog } = await load('service/storage/ducklake/catalog.js');
const { columnShape } = await load('service/storage/ducklake/types.js');
const { SqliteMetadataDb } = await load('service/store/sqlite-db.js');
const { PostgresMetadataDb } = await load('service/store/postgres-db.js');

const commits = Number(process.argv[2] ?? 200);
const work = mkdtempSync(join(tmpdir(), 'lake-bench-ducklake-'));
const shapes = ['id BIGINT', 'status VARCHAR', 'total DECIMAL(12,2)', 'at TIMESTAMP', 'tags VARCHAR[]'].map((c) => {
  const [name, type] = c.split(' ');
  return columnShape(name, type, true);
});

async function measure(label, db, prefix) {
  const catalog = new DuckLakeCatalog(db, prefix, 'catalog:bench');
  await catalog.initialize(join(work, 'tables'), 'lake bench');
  const started = performance.now();
  for (let i = 0; i < commits; i++) {
    await catalog.commit({ author: 'bench' }, async (write) => {
      const table = await write.table(await write.schema('shop'), `t${i % 20}`, `t${i % 20}/`, shapes);
      await write.replaceFiles(table.tableId, [
        {
          path: `s${i}/part-0.parquet`,
          recordCount: 1000,
          fileSizeBytes: 50_000,
          footerSize: 900,
          columnStats: table.columns
            .filter((c) => !c.children)
            .map((c) => ({ columnId: c.id, valueCount: 1000, nullCount: 0, min: '0', max: '999' })),
        },
      ]);
    });
  }
  const ms = (performance.now() - started) / commits;
  console.log(`${label}: ${ms.toFixed(2)} ms per table commit (${commits} commits over 20 tables)`);
}

const sqlite = SqliteMetadataDb.open(join(work, 'ducklake.sqlite'));
await measure('DuckLake catalog on SQLite', sqlite, '');
await sqlite.close();
const pgUrl = process.env.LAKE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const pg = PostgresMetadataDb.open(pgUrl);
const schema = `ducklake_bench_${process.pid}`;
try {
  await measure('DuckLake catalog on PostgreSQL', pg, `${schema}.`);
} finally {
  await pg.run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pg.close();
  rmSync(work, { recursive: true, force: true });
}
