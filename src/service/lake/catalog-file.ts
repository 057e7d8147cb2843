import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadDuckDB, OFFLINE_CONFIG, quoteIdentifier, quoteLiteral } from '../engine/duckdb.js';
import type { LakeLayout } from './layout.js';
import type { LakeTable } from './tables.js';

/**
 * The DuckDB database that query sessions attach READ_ONLY as `lake`: one view per table over its current
 * snapshot's files. One file per catalog version, never changed once written, so sessions in any process can
 * attach it while a newer one is being built.
 */
export async function ensureCatalogFile(layout: LakeLayout, organizationId: string, version: number, tables: readonly LakeTable[]): Promise<string> {
  const file = layout.catalogFile(organizationId, version);
  if (existsSync(file)) return file;
  mkdirSync(layout.catalogDir(organizationId), { recursive: true, mode: 0o700 });
  const temp = join(layout.catalogDir(organizationId), `.build-${randomBytes(6).toString('hex')}.duckdb`);
  const duckdb = await loadDuckDB();
  const instance = await duckdb.DuckDBInstance.create(temp, OFFLINE_CONFIG);
  try {
    const connection = await instance.connect();
    const statements: string[] = [];
    for (const schema of new Set(tables.map((t) => t.schema))) statements.push(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
    for (const table of tables) {
      const files = table.snapshot.files.map((f) => quoteLiteral(layout.toAbsolute(f))).join(', ');
      statements.push(`CREATE VIEW ${quoteIdentifier(table.schema)}.${quoteIdentifier(table.name)} AS SELECT * FROM read_parquet([${files}])`);
    }
    if (statements.length > 0) await connection.run(statements.join(';\n'));
    await connection.run('CHECKPOINT');
    connection.closeSync();
  } finally {
    instance.closeSync();
  }
  // rename is atomic; a concurrent builder of the same version writes an equivalent file.
  renameSync(temp, file);
  rmSync(`${temp}.wal`, { force: true });
  return file;
}
