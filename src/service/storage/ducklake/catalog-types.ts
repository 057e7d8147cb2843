/** What the DuckLake catalog's readers and writers exchange. */

import type { ColumnShape } from './types.js';

/**
 * A column as a table version has it: its DuckLake column id (the Parquet field id of its data), its DuckLake type,
 * and for a nested type the columns inside it, each with an id of its own.
 */
export interface CatalogColumn extends ColumnShape {
  id: number;
  children?: CatalogColumn[];
}

/** A row of ducklake_column, as both stores return it. */
export interface ColumnRow {
  column_id: number;
  column_name: string;
  column_type: string;
  nulls_allowed: unknown;
  parent_column: number | null;
  column_order: number;
}

/** The table's columns as a tree, top-level ones in order, from its ducklake_column rows and `lake.type` tags. */
export function columnTree(
  rows: readonly ColumnRow[],
  lakeTypes: ReadonlyMap<number, string> = new Map(),
): CatalogColumn[] {
  const childrenOf = (parent: number | null): CatalogColumn[] =>
    rows
      .filter((r) => (r.parent_column === null ? null : Number(r.parent_column)) === parent)
      .sort((a, b) => Number(a.column_order) - Number(b.column_order))
      .map((r) => {
        const children = childrenOf(Number(r.column_id));
        const lakeType = lakeTypes.get(Number(r.column_id));
        return {
          id: Number(r.column_id),
          name: r.column_name,
          type: r.column_type,
          // SQLite keeps a boolean as 0 or 1, PostgreSQL as a boolean.
          nullable: r.nulls_allowed === true || Number(r.nulls_allowed) === 1,
          ...(children.length > 0 ? { children } : {}),
          ...(lakeType ? { lakeType } : {}),
        };
      });
  return childrenOf(null);
}

/** A column's shape without its ids: two versions of a column with the same shape are the same column. */
export function shapeKey(column: ColumnShape): string {
  return JSON.stringify([
    column.name,
    column.type,
    column.nullable,
    column.lakeType ?? null,
    (column.children ?? []).map(shapeKey),
  ]);
}

/** A delete file to register for a data file: its path relative to the table's, positions listed, size, footer. */
export interface DeleteFileFacts {
  path: string;
  deleteCount: number;
  fileSizeBytes: number;
  footerSize: number;
}

/** A Parquet data file to register, its path relative to its table's path. */
export interface NewDataFile {
  path: string;
  recordCount: number;
  fileSizeBytes: number;
  footerSize: number;
  /**
   * For a file whose columns carry no field ids (written before lake wrote DuckLake), the name mapping that says
   * which column each of its names holds (CatalogWrite.nameMapping).
   */
  mappingId?: number;
  /** Per column id: what readers prune with. */
  columnStats?: readonly {
    columnId: number;
    valueCount: number;
    nullCount: number;
    min: string | null;
    max: string | null;
  }[];
}

/** A data file of a table at a snapshot, with its delete file (positions of its rows no longer in the table). */
export interface TableFileAt {
  dataFileId: number;
  path: string;
  recordCount: number;
  deletePath: string | null;
  /** Columns by name through this name mapping, for a file without field ids; null: by field id. */
  mappingId: number | null;
  /** The snapshot that added it, when the reader knows it. */
  beginSnapshot?: number;
  /** How many positions its delete file lists, when the reader knows it. */
  deleteCount?: number;
  /**
   * Its delete file's positions, when they are few and were read ahead (catalog-file.ts): tested as constants
   * inside the Parquet scan instead of through a bitmap of the delete file.
   */
  deletedPositions?: readonly number[];
}
