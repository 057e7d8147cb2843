import type { MetadataDb } from '../../store/metadata-db.js';
import { columnTree, type CatalogColumn, type ColumnRow, type TableFileAt } from './catalog-types.js';
import { TYPE_TAG } from './types.js';

/** A data file of a table at a snapshot, with what lake reports of it. */
export interface TableFileState extends TableFileAt {
  fileSizeBytes: number;
  /** The snapshot that added it. */
  beginSnapshot: number;
  deleteCount: number;
  deleteSizeBytes: number;
  /** The snapshot that gave it its current delete file, if it has one. */
  deleteBeginSnapshot: number | null;
}

/** A table as one snapshot has it: everything a reader needs, read in a handful of statements. */
export interface TableState {
  tableId: number;
  schema: string;
  name: string;
  /** Relative to the catalog's data path. */
  path: string;
  /** The snapshot that created the table. */
  beginSnapshot: number;
  columns: CatalogColumn[];
  files: TableFileState[];
  /** The newest snapshot that changed the table (its columns, files or deletes). */
  changedAt: number;
  /** The snapshot since which the table has had its current columns: files written since carry their names. */
  columnsSince: number;
  /** The table's tags (lake keeps a cdc table's applied change position there, `lake.cdc_lsn`). */
  tags: Record<string, string>;
}

export interface ViewState {
  viewId: number;
  schema: string;
  name: string;
  sql: string;
  beginSnapshot: number;
  /** The view's tags (lake keeps what it knows of a view's references and columns there). */
  tags: Record<string, string>;
}

/** Everything the catalog holds at one snapshot, and when each snapshot still kept was taken. */
export interface CatalogState {
  snapshotId: number;
  tables: TableState[];
  views: ViewState[];
  /** Each file's name mapping (source name per column id), for files read by name. */
  mappings: Map<number, Map<number, string>>;
  snapshotTimes: Map<number, Date>;
}

/** A TIMESTAMPTZ as either store returns it: a Date (PostgreSQL) or ISO text (SQLite). */
export const toDate = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));

/**
 * Reads the whole catalog at `snapshot` with the specification's visibility rule (begin_snapshot <= s and
 * end_snapshot absent or later) in one statement per catalog table, however many tables there are: a session's
 * catalog is built from this, and it is what the listing of tables reads.
 */
export async function readCatalogState(db: MetadataDb, prefix: string, snapshot: number): Promise<CatalogState> {
  const t = (name: string): string => `${prefix}${name}`;
  const live = (alias: string): string =>
    `${alias}begin_snapshot <= ${snapshot} AND (${alias}end_snapshot IS NULL OR ${alias}end_snapshot > ${snapshot})`;
  return db.snapshot(async () => {
    const times = await db.all<{ snapshot_id: number; snapshot_time: unknown }>(
      `SELECT snapshot_id, snapshot_time FROM ${t('ducklake_snapshot')} WHERE snapshot_id <= ${snapshot}`,
    );
    const tables = await db.all<{
      table_id: number;
      schema_name: string;
      table_name: string;
      path: string;
      begin_snapshot: number;
    }>(
      `SELECT tb.table_id, s.schema_name, tb.table_name, s.path || tb.path AS path, tb.begin_snapshot
         FROM ${t('ducklake_table')} tb JOIN ${t('ducklake_schema')} s ON s.schema_id = tb.schema_id
        WHERE ${live('tb.')} AND ${live('s.')}
        ORDER BY s.schema_name, tb.table_name`,
    );
    const columns = await db.all<ColumnRow & { table_id: number; begin_snapshot: number }>(
      `SELECT table_id, column_id, column_name, column_type, nulls_allowed, parent_column, column_order, begin_snapshot
         FROM ${t('ducklake_column')} c WHERE ${live('c.')}`,
    );
    const tags = await db.all<{ table_id: number; column_id: number; value: string }>(
      `SELECT table_id, column_id, value FROM ${t('ducklake_column_tag')} c WHERE key = '${TYPE_TAG}' AND ${live('c.')}`,
    );
    const files = await db.all<{
      table_id: number;
      data_file_id: number;
      path: string;
      record_count: number;
      file_size_bytes: number;
      begin_snapshot: number;
      mapping_id: number | null;
      delete_path: string | null;
      delete_count: number | null;
      delete_size: number | null;
      delete_begin: number | null;
    }>(
      `SELECT d.table_id, d.data_file_id, d.path, d.record_count, d.file_size_bytes, d.begin_snapshot, d.mapping_id,
              x.path AS delete_path, x.delete_count, x.file_size_bytes AS delete_size, x.begin_snapshot AS delete_begin
         FROM ${t('ducklake_data_file')} d
         LEFT JOIN (SELECT * FROM ${t('ducklake_delete_file')} x WHERE ${live('x.')}) x ON x.data_file_id = d.data_file_id
        WHERE ${live('d.')}
        ORDER BY d.table_id, d.file_order`,
    );
    const mappingIds = [...new Set(files.filter((f) => f.mapping_id !== null).map((f) => Number(f.mapping_id)))];
    const mappingRows =
      mappingIds.length === 0
        ? []
        : await db.all<{ mapping_id: number; column_id: number; source_name: string }>(
            `SELECT mapping_id, column_id, source_name FROM ${t('ducklake_name_mapping')}
              WHERE parent_column IS NULL AND mapping_id IN (${mappingIds.join(', ')})`,
          );
    const views = await db.all<{
      view_id: number;
      schema_name: string;
      view_name: string;
      sql: string;
      begin_snapshot: number;
    }>(
      `SELECT v.view_id, s.schema_name, v.view_name, v.sql, v.begin_snapshot
         FROM ${t('ducklake_view')} v JOIN ${t('ducklake_schema')} s ON s.schema_id = v.schema_id
        WHERE ${live('v.')} AND ${live('s.')}
        ORDER BY s.schema_name, v.view_name`,
    );
    const viewTags = await db.all<{ object_id: number; key: string; value: string }>(
      `SELECT object_id, key, value FROM ${t('ducklake_tag')} g WHERE ${live('g.')}`,
    );

    const mappings = new Map<number, Map<number, string>>();
    for (const row of mappingRows) {
      const id = Number(row.mapping_id);
      const mapping = mappings.get(id) ?? new Map<number, string>();
      mapping.set(Number(row.column_id), row.source_name);
      mappings.set(id, mapping);
    }
    const byTable = <T extends { table_id: number }>(rows: readonly T[]): Map<number, T[]> => {
      const grouped = new Map<number, T[]>();
      for (const row of rows) {
        const list = grouped.get(Number(row.table_id)) ?? [];
        list.push(row);
        grouped.set(Number(row.table_id), list);
      }
      return grouped;
    };
    const columnsOf = byTable(columns);
    const tagsOf = byTable(tags);
    const filesOf = byTable(files);
    return {
      snapshotId: snapshot,
      snapshotTimes: new Map(times.map((r) => [Number(r.snapshot_id), toDate(r.snapshot_time)])),
      mappings,
      tables: tables.map((row) => {
        const tableId = Number(row.table_id);
        const tableColumns = columnsOf.get(tableId) ?? [];
        const tableFiles: TableFileState[] = (filesOf.get(tableId) ?? []).map((f) => ({
          dataFileId: Number(f.data_file_id),
          path: f.path,
          recordCount: Number(f.record_count),
          fileSizeBytes: Number(f.file_size_bytes),
          beginSnapshot: Number(f.begin_snapshot),
          mappingId: f.mapping_id === null ? null : Number(f.mapping_id),
          deletePath: f.delete_path,
          deleteCount: Number(f.delete_count ?? 0),
          deleteSizeBytes: Number(f.delete_size ?? 0),
          deleteBeginSnapshot: f.delete_begin === null ? null : Number(f.delete_begin),
        }));
        return {
          tableId,
          schema: row.schema_name,
          name: row.table_name,
          path: row.path,
          beginSnapshot: Number(row.begin_snapshot),
          columns: columnTree(
            tableColumns,
            new Map((tagsOf.get(tableId) ?? []).map((g) => [Number(g.column_id), g.value])),
          ),
          files: tableFiles,
          tags: Object.fromEntries(
            viewTags.filter((g) => Number(g.object_id) === tableId).map((g) => [g.key, g.value]),
          ),
          columnsSince: Math.max(Number(row.begin_snapshot), ...tableColumns.map((c) => Number(c.begin_snapshot))),
          changedAt: Math.max(
            Number(row.begin_snapshot),
            ...tableColumns.map((c) => Number(c.begin_snapshot)),
            ...tableFiles.map((f) => Math.max(f.beginSnapshot, f.deleteBeginSnapshot ?? 0)),
          ),
        };
      }),
      views: views.map((row) => ({
        viewId: Number(row.view_id),
        schema: row.schema_name,
        name: row.view_name,
        sql: row.sql,
        beginSnapshot: Number(row.begin_snapshot),
        tags: Object.fromEntries(
          viewTags.filter((g) => Number(g.object_id) === Number(row.view_id)).map((g) => [g.key, g.value]),
        ),
      })),
    };
  });
}
