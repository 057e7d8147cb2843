import { castSql, quoteIdentifier } from '../../engine/duckdb.js';
import { lakeColumnNames } from '../../sources/lake-names.js';
import { compareColumns } from '../pg-columns.js';
import type { TableState } from '../types.js';

/**
 * Whether a cdc table's column changes since its last sync need the table copied again (documented: a resnapshot):
 * a column retyped; the columns that stayed now in another order or under another lake name; a column added under
 * the lake name of one dropped earlier that the lake table still holds (its old values are not the new column's).
 * Otherwise a column added comes with the changes (earlier rows NULL) and one dropped stops being written.
 */
export function needsResnapshot(
  before: TableState['columns'],
  now: readonly { name: string; type: string }[],
  heldLakeColumns: ReadonlySet<string>,
  softDeletes: boolean,
): boolean {
  const change = compareColumns(before, now);
  if (change.retyped.length > 0) return true;
  const nowNames = new Set(now.map((c) => c.name));
  const beforeNames = new Set(before.map((c) => c.name));
  const stayedBefore = before.filter((c) => nowNames.has(c.name)).map((c) => c.name);
  const stayedNow = now.filter((c) => beforeNames.has(c.name)).map((c) => c.name);
  if (stayedBefore.join('\u0000') !== stayedNow.join('\u0000')) return true;
  const lakeBefore = lakeColumnNames(
    before.map((c) => c.name),
    softDeletes,
  );
  const lakeNow = lakeColumnNames(
    now.map((c) => c.name),
    softDeletes,
  );
  const lakeNameBefore = new Map(before.map((c, i) => [c.name, lakeBefore[i]]));
  return now.some((c, i) =>
    beforeNames.has(c.name) ? lakeNameBefore.get(c.name) !== lakeNow[i] : heldLakeColumns.has(lakeNow[i] as string),
  );
}

/**
 * The select list that writes a cdc table's changed rows in its lake table's columns: the table's columns in its
 * order (a column dropped at the source written NULL, as its type), then the columns added at the source, then
 * lake's own. Undefined when a column the source still has is typed otherwise than the table has it (the caller reads
 * the table whole).
 */
export function rowsInTableColumns(
  written: readonly { name: string; type: string }[],
  held: readonly { name: string; type: string }[],
  ours: ReadonlySet<string>,
): string[] | undefined {
  const writtenType = new Map(written.map((c) => [c.name, c.type]));
  const heldNames = new Set(held.map((c) => c.name));
  const heldOurs = held.filter((c) => ours.has(c.name)).map((c) => c.name);
  const writtenOurs = written.filter((c) => ours.has(c.name)).map((c) => c.name);
  if (heldOurs.join('\u0000') !== writtenOurs.join('\u0000')) return undefined;
  const list: string[] = [];
  for (const column of held.filter((c) => !ours.has(c.name))) {
    const type = writtenType.get(column.name);
    if (type === undefined) list.push(`${castSql('NULL', column.type)} AS ${quoteIdentifier(column.name)}`);
    else if (type !== column.type) return undefined;
    else list.push(quoteIdentifier(column.name));
  }
  for (const column of written)
    if (!heldNames.has(column.name) && !ours.has(column.name)) list.push(quoteIdentifier(column.name));
  return [...list, ...writtenOurs.map(quoteIdentifier)];
}
