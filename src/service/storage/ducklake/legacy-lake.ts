import type { MetadataDb } from '../../store/metadata-db.js';

/** A column as lake recorded it before DuckLake: its DuckDB type. */
export interface LegacyColumn {
  name: string;
  type: string;
  nullable: boolean;
}

/** A table's snapshot as lake recorded it before DuckLake (decision 10, with decision 36's layers). */
export interface LegacySnapshotRecord {
  id: string;
  /** Relative to the home: every file the snapshot reads (all layers; files of earlier snapshots included). */
  files: string[];
  /** The files by layer, oldest first, for a snapshot that incremental syncs layered; absent: one layer. */
  layers?: string[][];
  /** The columns that identify a row across layers. */
  mergeKey?: string[];
  rowCount: number;
  columns: LegacyColumn[];
  created: number;
}

export interface LegacyTable {
  id: string;
  schema: string;
  name: string;
}

export interface LegacyView {
  schema: string;
  name: string;
  sql: string;
  references: { schema: string; name: string }[];
  columns: LegacyColumn[];
}

interface SnapshotRow {
  id: string;
  schema_name: string;
  table_name: string;
  snapshot_id: string;
  files: string;
  row_count: number;
  columns: string;
  layers: string | null;
  merge_key: string | null;
  snapshot_created: number;
  superseded_at: number | null;
}

/**
 * What lake recorded of an organization's lake before DuckLake (the lake_tables, lake_snapshots and lake_views
 * rows of earlier releases), read once, by the conversion on upgrade. Nothing writes these rows any more.
 */
export class LegacyLake {
  constructor(private readonly db: MetadataDb) {}

  /** Whether the organization has anything to convert. */
  async holdsAnything(organizationId: string): Promise<boolean> {
    const row = await this.db.get<{ n: number }>(
      `SELECT (SELECT count(*) FROM lake_tables WHERE organization_id = ?)
            + (SELECT count(*) FROM lake_views WHERE organization_id = ?) AS n`,
      [organizationId, organizationId],
    );
    return Number(row?.n ?? 0) > 0;
  }

  /**
   * Every snapshot the organization still keeps (current, and superseded ones within retention), oldest first, with
   * its table and when it stopped being current (null: it still is): what a conversion replays in order.
   */
  async history(
    organizationId: string,
  ): Promise<{ table: LegacyTable; snapshot: LegacySnapshotRecord; supersededAt: number | null }[]> {
    const rows = await this.db.all<SnapshotRow>(
      `SELECT t.id, t.schema_name, t.table_name, s.id AS snapshot_id, s.files, s.row_count, s.columns, s.layers,
              s.merge_key, s.created AS snapshot_created, s.superseded_at
         FROM lake_snapshots s JOIN lake_tables t ON t.id = s.table_id
        WHERE t.organization_id = ?
        ORDER BY s.created, s.id`,
      [organizationId],
    );
    return rows.map((row) => ({
      table: { id: row.id, schema: row.schema_name, name: row.table_name },
      snapshot: {
        id: row.snapshot_id,
        files: JSON.parse(row.files) as string[],
        rowCount: Number(row.row_count),
        columns: JSON.parse(row.columns) as LegacyColumn[],
        ...(row.layers ? { layers: JSON.parse(row.layers) as string[][] } : {}),
        ...(row.merge_key ? { mergeKey: JSON.parse(row.merge_key) as string[] } : {}),
        created: Number(row.snapshot_created),
      },
      supersededAt: row.superseded_at === null ? null : Number(row.superseded_at),
    }));
  }

  async views(organizationId: string): Promise<LegacyView[]> {
    const rows = await this.db.all<{
      schema_name: string;
      view_name: string;
      sql: string;
      table_refs: string;
      columns: string;
    }>('SELECT * FROM lake_views WHERE organization_id = ? ORDER BY created, schema_name, view_name', [organizationId]);
    return rows.map((row) => ({
      schema: row.schema_name,
      name: row.view_name,
      sql: row.sql,
      references: JSON.parse(row.table_refs) as LegacyView['references'],
      columns: JSON.parse(row.columns) as LegacyColumn[],
    }));
  }
}
