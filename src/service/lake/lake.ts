import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openPrivilegedConnection, quoteLiteral } from '../engine/duckdb.js';
import { newId } from '../ids.js';
import type { MetadataDb } from '../store/database.js';
import { ensureCatalogFile } from './catalog-file.js';
import { DEMO_TABLES } from './demo.js';
import type { LakeLayout } from './layout.js';
import { TableStore, type ColumnDescription, type LakeTable } from './tables.js';

const DEMO_SEEDED_KEY = 'demo_seeded';

export interface WriteTableOptions {
  /** Known nullability per column (from a source's schema); columns not named are reported nullable. */
  notNull?: ReadonlySet<string>;
}

/** Lake table storage: writes tables as immutable Parquet snapshots and publishes them with an atomic commit. */
export class Lake {
  readonly tables: TableStore;

  constructor(
    private readonly db: MetadataDb,
    readonly layout: LakeLayout,
  ) {
    this.tables = new TableStore(db);
  }

  /**
   * Writes the result of lake-internal SQL as a new snapshot of schema.name (zstd Parquet), then commits it. Until
   * the commit, readers keep seeing the previous snapshot; a crash before it leaves only an unreferenced folder.
   */
  async writeTable(organizationId: string, schema: string, name: string, selectSql: string, options: WriteTableOptions = {}): Promise<LakeTable> {
    const tableId = this.tables.ensureTableId(organizationId, schema, name);
    const snapshotId = newId('snap');
    const dir = this.layout.snapshotDir(organizationId, tableId, snapshotId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, 'part-0.parquet');
    const { connection, close } = await openPrivilegedConnection();
    try {
      const copied = await connection.run(`COPY (${selectSql}\n) TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd)`);
      const rowCount = Number(copied.rowsChanged);
      const described = await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quoteLiteral(file)})`);
      const columns: ColumnDescription[] = described.getRowObjectsJS().map((row) => ({
        name: String(row.column_name),
        type: String(row.column_type),
        nullable: !options.notNull?.has(String(row.column_name)),
      }));
      this.tables.commit(organizationId, tableId, {
        id: snapshotId,
        directory: this.layout.toRelative(dir),
        files: [this.layout.toRelative(file)],
        rowCount,
        bytes: statSync(file).size,
        columns,
      });
    } finally {
      close();
    }
    return this.tables.get(organizationId, schema, name) as LakeTable;
  }

  /** The catalog file for the organization's current version, built on first use. */
  async catalogFile(organizationId: string): Promise<string> {
    await this.ensureDemo(organizationId);
    const version = this.tables.catalogVersion(organizationId);
    return ensureCatalogFile(this.layout, organizationId, version, this.tables.list(organizationId));
  }

  /**
   * Seeds lake.demo once per organization. Two processes seeding at once both write and commit identical
   * snapshots; the later commit wins and nothing is lost.
   */
  async ensureDemo(organizationId: string): Promise<void> {
    const key = `${DEMO_SEEDED_KEY}:${organizationId}`;
    if (this.db.prepare('SELECT 1 FROM home_settings WHERE key = ?').get(key)) return;
    for (const table of DEMO_TABLES) {
      if (!this.tables.get(organizationId, 'demo', table.name)) await this.writeTable(organizationId, 'demo', table.name, table.sql);
    }
    this.db.prepare('INSERT OR IGNORE INTO home_settings (key, value) VALUES (?, ?)').run(key, String(Math.floor(Date.now() / 1000)));
  }
}
