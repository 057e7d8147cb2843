import type { MetadataDb } from '../../store/metadata-db.js';
import { columnTree, shapeKey, type CatalogColumn, type ColumnRow } from './catalog-types.js';
import { TYPE_TAG, type ColumnShape } from './types.js';

/**
 * The column ids a table version gets: a column whose whole shape (name, type, nullability, children, lake type)
 * stays keeps its ids; any other gets new ones, counting on from the highest id the table ever used, so a data file
 * written before never mixes its values with a changed column's. A column whose only change is its nullability is
 * the same column (its values read the same): it keeps its ids, as DuckLake's `ALTER … DROP NOT NULL` does. Made
 * NOT NULL, it stays nullable, because files written before may hold NULLs. Pure, so a writer can plan the ids (and
 * write them into its files as field ids) before the commit that records them.
 */
export function assignColumnIds(
  current: readonly CatalogColumn[],
  highestEver: number,
  shapes: readonly ColumnShape[],
): { columns: CatalogColumn[]; unchanged: boolean } {
  let nextId = highestEver + 1;
  const withIds = (column: ColumnShape): CatalogColumn => {
    const id = nextId++;
    const children = column.children?.map(withIds);
    return {
      name: column.name,
      type: column.type,
      nullable: column.nullable,
      id,
      ...(children ? { children } : {}),
      ...(column.lakeType ? { lakeType: column.lakeType } : {}),
    };
  };
  const columns = shapes.map((shape) => {
    const same = current.find((c) => shapeKey(c) === shapeKey(shape));
    if (same) return same;
    const renullable = current.find(
      (c) => shapeKey({ ...c, nullable: true }) === shapeKey({ ...shape, nullable: true }),
    );
    return renullable ? { ...renullable, nullable: renullable.nullable || shape.nullable } : withIds(shape);
  });
  const unchanged =
    current.length === columns.length &&
    current.every((c, i) => c === columns[i] || shapeKey(c) === shapeKey(columns[i] as CatalogColumn));
  return { columns, unchanged };
}

/** A table's current columns (with their `lake.type` tags) and the highest column id it ever used. */
export async function liveColumns(
  db: MetadataDb,
  prefix: string,
  tableId: number,
): Promise<{ current: CatalogColumn[]; highestEver: number }> {
  const tags = await db.all<{ column_id: number; value: string }>(
    `SELECT column_id, value FROM ${prefix}ducklake_column_tag WHERE table_id = ? AND key = ? AND end_snapshot IS NULL`,
    [tableId, TYPE_TAG],
  );
  const current = columnTree(
    await db.all<ColumnRow>(
      `SELECT column_id, column_name, column_type, nulls_allowed, parent_column, column_order
         FROM ${prefix}ducklake_column WHERE table_id = ? AND end_snapshot IS NULL`,
      [tableId],
    ),
    new Map(tags.map((t) => [Number(t.column_id), t.value])),
  );
  const highest = await db.get<{ id: number | null }>(
    `SELECT max(column_id) AS id FROM ${prefix}ducklake_column WHERE table_id = ?`,
    [tableId],
  );
  return { current, highestEver: Number(highest?.id ?? 0) };
}
