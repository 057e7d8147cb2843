import { newId } from '../ids.js';
import { writeTransaction, type MetadataDb } from '../store/database.js';

export interface ColumnDescription {
  name: string;
  type: string;
  nullable: boolean;
}

export interface Snapshot {
  id: string;
  /** Relative to the home. */
  directory: string;
  /** Relative to the home: every file the snapshot reads (all layers; files of earlier snapshots included). */
  files: string[];
  /** The files by layer, oldest first, for a snapshot that incremental syncs layered; absent: one layer. */
  layers?: string[][];
  /** The columns that identify a row across layers. */
  mergeKey?: string[];
  rowCount: number;
  bytes: number;
  columns: ColumnDescription[];
  created: number;
}

export interface LakeTable {
  id: string;
  organizationId: string;
  schema: string;
  name: string;
  created: number;
  updated: number;
  snapshot: Snapshot;
}

interface TableRow {
  id: string;
  organization_id: string;
  schema_name: string;
  table_name: string;
  created: number;
  updated: number;
  snapshot_id: string;
  directory: string;
  files: string;
  row_count: number;
  bytes: number;
  columns: string;
  layers: string | null;
  merge_key: string | null;
  snapshot_created: number;
}

const SELECT_CURRENT = `
  SELECT t.id, t.organization_id, t.schema_name, t.table_name, t.created, t.updated,
         s.id AS snapshot_id, s.directory, s.files, s.row_count, s.bytes, s.columns, s.layers, s.merge_key, s.created AS snapshot_created
  FROM lake_tables t JOIN lake_snapshots s ON s.id = t.current_snapshot_id`;

function toTable(row: TableRow): LakeTable {
  return {
    id: row.id,
    organizationId: row.organization_id,
    schema: row.schema_name,
    name: row.table_name,
    created: row.created,
    updated: row.updated,
    snapshot: {
      id: row.snapshot_id,
      directory: row.directory,
      files: JSON.parse(row.files) as string[],
      rowCount: row.row_count,
      bytes: row.bytes,
      columns: JSON.parse(row.columns) as ColumnDescription[],
      ...(row.layers ? { layers: JSON.parse(row.layers) as string[][] } : {}),
      ...(row.merge_key ? { mergeKey: JSON.parse(row.merge_key) as string[] } : {}),
      created: row.snapshot_created,
    },
  };
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Every change to what the catalog holds bumps its version, inside the change's own transaction. */
export function bumpCatalogVersion(db: MetadataDb, organizationId: string): void {
  db.prepare(
    `INSERT INTO lake_catalog_versions (organization_id, version) VALUES (?, 1)
     ON CONFLICT (organization_id) DO UPDATE SET version = version + 1`,
  ).run(organizationId);
}

/**
 * The manifest of lake tables: each table points at its current snapshot. A commit swaps that pointer and bumps
 * the organization's catalog version in one transaction, so readers see the old snapshot or the new, never a mix.
 */
export class TableStore {
  constructor(private readonly db: MetadataDb) {}

  list(organizationId: string): LakeTable[] {
    const rows = this.db
      .prepare(`${SELECT_CURRENT} WHERE t.organization_id = ? ORDER BY t.schema_name, t.table_name`)
      .all(organizationId) as TableRow[];
    return rows.map(toTable);
  }

  get(organizationId: string, schema: string, name: string): LakeTable | undefined {
    const row = this.db
      .prepare(`${SELECT_CURRENT} WHERE t.organization_id = ? AND t.schema_name = ? AND t.table_name = ?`)
      .get(organizationId, schema, name) as TableRow | undefined;
    return row && toTable(row);
  }

  /** The table's id, creating an empty entry (invisible until its first commit) when it is new. */
  ensureTableId(organizationId: string, schema: string, name: string): string {
    return writeTransaction(this.db, () => {
      const existing = this.db
        .prepare('SELECT id FROM lake_tables WHERE organization_id = ? AND schema_name = ? AND table_name = ?')
        .get(organizationId, schema, name) as { id: string } | undefined;
      if (existing) return existing.id;
      const id = newId('tbl');
      const now = nowSeconds();
      this.db
        .prepare('INSERT INTO lake_tables (id, organization_id, schema_name, table_name, current_snapshot_id, created, updated) VALUES (?, ?, ?, ?, NULL, ?, ?)')
        .run(id, organizationId, schema, name, now, now);
      return id;
    });
  }

  commit(organizationId: string, tableId: string, snapshot: Omit<Snapshot, 'created'>): void {
    writeTransaction(this.db, () => {
      const now = nowSeconds();
      bumpCatalogVersion(this.db, organizationId);
      // The snapshot it replaces stays readable by queries of earlier catalog versions until they end.
      this.db
        .prepare(
          `UPDATE lake_snapshots SET superseded_at = ?, superseded_version = ?
           WHERE id = (SELECT current_snapshot_id FROM lake_tables WHERE id = ? AND organization_id = ?)`,
        )
        .run(now, this.catalogVersion(organizationId), tableId, organizationId);
      this.db
        .prepare('INSERT INTO lake_snapshots (id, table_id, directory, files, row_count, bytes, columns, layers, merge_key, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(
          snapshot.id,
          tableId,
          snapshot.directory,
          JSON.stringify(snapshot.files),
          snapshot.rowCount,
          snapshot.bytes,
          JSON.stringify(snapshot.columns),
          snapshot.layers ? JSON.stringify(snapshot.layers) : null,
          snapshot.mergeKey ? JSON.stringify(snapshot.mergeKey) : null,
          now,
        );
      this.db.prepare('UPDATE lake_tables SET current_snapshot_id = ?, updated = ? WHERE id = ? AND organization_id = ?').run(snapshot.id, now, tableId, organizationId);
    });
  }

  /** Every file (relative to the home) that a snapshot of the organization reads, current or kept, each once. */
  storedFiles(organizationId: string): string[] {
    const rows = this.db
      .prepare('SELECT s.files FROM lake_snapshots s JOIN lake_tables t ON t.id = s.table_id WHERE t.organization_id = ?')
      .all(organizationId) as { files: string }[];
    return [...new Set(rows.flatMap((r) => JSON.parse(r.files) as string[]))];
  }

  catalogVersion(organizationId: string): number {
    const row = this.db.prepare('SELECT version FROM lake_catalog_versions WHERE organization_id = ?').get(organizationId) as
      | { version: number }
      | undefined;
    return row?.version ?? 0;
  }
}
