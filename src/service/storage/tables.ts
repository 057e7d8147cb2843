import { newId } from '../core/ids.js';
import { lock, type MetadataDb } from '../store/metadata-db.js';

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
export async function bumpCatalogVersion(db: MetadataDb, organizationId: string): Promise<void> {
  await db.run(
    `INSERT INTO lake_catalog_versions (organization_id, version) VALUES (?, 1)
     ON CONFLICT (organization_id) DO UPDATE SET version = lake_catalog_versions.version + 1`,
    [organizationId],
  );
}

/**
 * The manifest of lake tables: each table points at its current snapshot. A commit swaps that pointer and bumps
 * the organization's catalog version in one transaction, so readers see the old snapshot or the new, never a mix.
 */
export class TableStore {
  constructor(private readonly db: MetadataDb) {}

  async list(organizationId: string): Promise<LakeTable[]> {
    const rows = await this.db.all<TableRow>(
      `${SELECT_CURRENT} WHERE t.organization_id = ? ORDER BY t.schema_name, t.table_name`,
      [organizationId],
    );
    return rows.map(toTable);
  }

  async get(organizationId: string, schema: string, name: string): Promise<LakeTable | undefined> {
    const row = await this.db.get<TableRow>(
      `${SELECT_CURRENT} WHERE t.organization_id = ? AND t.schema_name = ? AND t.table_name = ?`,
      [organizationId, schema, name],
    );
    return row && toTable(row);
  }

  /** The table's id, creating an empty entry (invisible until its first commit) when it is new. */
  async ensureTableId(organizationId: string, schema: string, name: string): Promise<string> {
    return this.db.transaction(lock.catalog(organizationId), async () => {
      const existing = await this.db.get<{ id: string }>(
        'SELECT id FROM lake_tables WHERE organization_id = ? AND schema_name = ? AND table_name = ?',
        [organizationId, schema, name],
      );
      if (existing) return existing.id;
      const id = newId('tbl');
      const now = nowSeconds();
      await this.db.run(
        'INSERT INTO lake_tables (id, organization_id, schema_name, table_name, current_snapshot_id, created, updated) VALUES (?, ?, ?, ?, NULL, ?, ?)',
        [id, organizationId, schema, name, now, now],
      );
      return id;
    });
  }

  async commit(organizationId: string, tableId: string, snapshot: Omit<Snapshot, 'created'>): Promise<void> {
    await this.db.transaction(lock.catalog(organizationId), async () => {
      const now = nowSeconds();
      await bumpCatalogVersion(this.db, organizationId);
      // The snapshot it replaces stays readable by queries of earlier catalog versions until they end.
      await this.db.run(
        `UPDATE lake_snapshots SET superseded_at = ?, superseded_version = ?
           WHERE id = (SELECT current_snapshot_id FROM lake_tables WHERE id = ? AND organization_id = ?)`,
        [now, await this.catalogVersion(organizationId), tableId, organizationId],
      );
      await this.db.run(
        'INSERT INTO lake_snapshots (id, table_id, directory, files, row_count, bytes, columns, layers, merge_key, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [
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
        ],
      );
      await this.db.run(
        'UPDATE lake_tables SET current_snapshot_id = ?, updated = ? WHERE id = ? AND organization_id = ?',
        [snapshot.id, now, tableId, organizationId],
      );
    });
  }

  /**
   * Takes a table out of the catalog: it no longer points at a snapshot (as a table not yet committed), and its
   * last snapshot is superseded like any replaced one, so queries already running finish and collection frees its
   * files later. A later commit under the same name brings it back.
   */
  async retire(organizationId: string, schema: string, name: string): Promise<boolean> {
    return this.db.transaction(lock.catalog(organizationId), async () => {
      const table = await this.db.get<{ id: string }>(
        'SELECT id FROM lake_tables WHERE organization_id = ? AND schema_name = ? AND table_name = ? AND current_snapshot_id IS NOT NULL',
        [organizationId, schema, name],
      );
      if (!table) return false;
      const now = nowSeconds();
      await bumpCatalogVersion(this.db, organizationId);
      await this.db.run(
        `UPDATE lake_snapshots SET superseded_at = ?, superseded_version = ?
           WHERE id = (SELECT current_snapshot_id FROM lake_tables WHERE id = ?)`,
        [now, await this.catalogVersion(organizationId), table.id],
      );
      await this.db.run('UPDATE lake_tables SET current_snapshot_id = NULL, updated = ? WHERE id = ?', [now, table.id]);
      return true;
    });
  }

  /**
   * Every snapshot the organization still keeps (current, and superseded ones within retention), oldest first, with
   * its table and when it stopped being current (null: it still is): what a conversion replays in order.
   */
  async history(
    organizationId: string,
  ): Promise<{ table: Omit<LakeTable, 'snapshot'>; snapshot: Snapshot; supersededAt: number | null }[]> {
    const rows = await this.db.all<TableRow & { superseded_at: number | null }>(
      `SELECT t.id, t.organization_id, t.schema_name, t.table_name, t.created, t.updated,
              s.id AS snapshot_id, s.directory, s.files, s.row_count, s.bytes, s.columns, s.layers, s.merge_key,
              s.created AS snapshot_created, s.superseded_at
         FROM lake_snapshots s JOIN lake_tables t ON t.id = s.table_id
        WHERE t.organization_id = ?
        ORDER BY s.created, s.id`,
      [organizationId],
    );
    return rows.map((row) => {
      const { snapshot, ...table } = toTable(row);
      return { table, snapshot, supersededAt: row.superseded_at };
    });
  }

  /** Every file (relative to the home) that a snapshot of the organization reads, current or kept, each once. */
  async storedFiles(organizationId: string): Promise<string[]> {
    const rows = await this.db.all<{ files: string }>(
      'SELECT s.files FROM lake_snapshots s JOIN lake_tables t ON t.id = s.table_id WHERE t.organization_id = ?',
      [organizationId],
    );
    return [...new Set(rows.flatMap((r) => JSON.parse(r.files) as string[]))];
  }

  async catalogVersion(organizationId: string): Promise<number> {
    const row = await this.db.get<{ version: number }>(
      'SELECT version FROM lake_catalog_versions WHERE organization_id = ?',
      [organizationId],
    );
    return row?.version ?? 0;
  }
}
