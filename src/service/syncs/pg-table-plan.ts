import type pg from 'pg';
import { lakeColumnNames } from '../sources/lake-names.js';
import { compareColumns, currentColumns, shapesAsTable, valueShapes, type SourceColumn } from './pg-columns.js';
import { keepsText, planColumn, type ColumnPlan, type SourceFacts } from './pg-types.js';
import type { SyncReporter, TableState, TableTask } from './types.js';
import { checkKeyColumns } from './key-columns.js';

const pgIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const pgLiteral = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** How one table is read this time: its columns and their lake plans, whole or from its cursor, and the new cursor. */
export interface TableReadPlan {
  columns: SourceColumn[];
  incremental: boolean;
  /** The WHERE clause of an incremental read (from the cursor), or ''. */
  where: string;
  /** The table, quoted for the source. */
  from: string;
  plans: ColumnPlan[];
  /** Each source column's name in the lake. */
  lakeName: Map<string, string>;
  /** The primary key, in lake column names. */
  lakeKey: string[];
  /** The cursor column's greatest value now, read in the sync's snapshot: where the next incremental read starts. */
  newCursor: string | null;
}

/**
 * Reads the table's columns as they are now and plans its read: incremental from the cursor when the table was read
 * before and has not changed shape (a change is reported, and the table is read whole), whole otherwise.
 * `onColumns` hears the columns as soon as they are known, for the table's result should planning fail after.
 */
export async function planTableRead(
  client: pg.Client,
  task: TableTask,
  state: TableState | undefined,
  moneyScale: number,
  reporter: SyncReporter,
  onColumns: (summary: { name: string; type: string }[]) => void,
  /** The lake table's column types by lake name, for an incremental read that merges into it (shapesAsTable). */
  lakeTypes?: ReadonlyMap<string, string>,
): Promise<TableReadPlan> {
  const { table } = task;
  const columns = await currentColumns(client, table.schema, table.name);
  onColumns(columns.map((c) => ({ name: c.name, type: c.type })));
  if (columns.length === 0) throw new Error(`table ${task.key} no longer exists in the source`);
  // A table that moved to another lake table (lakeTableNames) is read whole into it: the increment alone would
  // be all the new table held.
  let incremental =
    task.incremental &&
    state !== undefined &&
    state.cursorValue !== null &&
    (state.lakeTable === undefined || state.lakeTable === task.lakeTable);
  // Soft deletes turned on or off: the table gains or loses its _deleted_at column, read whole once.
  if (state && (state.softDeletes ?? false) !== task.softDeletes) incremental = false;
  if (state) {
    const change = compareColumns(state.columns, columns);
    if (change.added.length + change.dropped.length + change.retyped.length > 0) {
      reporter.schemaChange(task, change);
      // New columns would be missing from earlier rows: this run replaces the table whole.
      incremental = false;
    }
  }
  const cursor = task.table.cursorColumn;
  const cursorType = columns.find((c) => c.name === cursor)?.type;
  if (cursor && cursorType === undefined)
    throw new Error(
      `its cursor column ${cursor} is not a column of the table; choose another (PATCH the source's tables)`,
    );
  checkKeyColumns(
    task.table,
    columns.map((c) => c.name),
  );
  const incrementalWhere =
    incremental && cursor && state?.cursorValue
      ? ` WHERE ${pgIdent(cursor)} >= ${pgLiteral(state.cursorValue)}::${cursorType}`
      : '';
  const from = `${pgIdent(table.schema)}.${pgIdent(table.name)}`;
  // Columns keep the source's names in the lake, made unique case-insensitively and never lake's own _synced_at
  // (lakeColumnNames); the source's name is what the COPY selects.
  const lakeNames = lakeColumnNames(
    columns.map((c) => c.name),
    task.softDeletes,
  );
  let where = incrementalWhere;
  // A table whose intervals, numerics or citext the lake holds as plain text (synced before they were typed) is
  // read whole once, and typed.
  if (where && lakeTypes && columns.some((c, i) => keepsText(c.type, lakeTypes.get(lakeNames[i] as string)))) {
    incremental = false;
    where = '';
  }
  let shapes = await valueShapes(client, columns, from, where);
  if (where && lakeTypes) {
    // Changed rows are typed as the table they merge into; a value that does not fit reads the table whole.
    const asTable = shapesAsTable(
      shapes,
      new Map(columns.map((c, i) => [c.name, lakeTypes.get(lakeNames[i] as string)])),
    );
    if (asTable) shapes = asTable;
    else {
      incremental = false;
      where = '';
      shapes = await valueShapes(client, columns, from, where);
    }
  }
  const facts: SourceFacts = { moneyScale, numericShapes: shapes.numeric, arrayDepths: shapes.arrayDepths };
  const lakeName = new Map(columns.map((c, i) => [c.name, lakeNames[i] as string]));
  const plans: ColumnPlan[] = columns.map((c, i) => ({
    ...planColumn(c.name, c.type, c.enumLabels, facts),
    name: lakeNames[i] as string,
  }));
  const lakeKey = table.primaryKey.map((k) => lakeName.get(k) ?? k);
  const newCursor = cursor
    ? ((await client.query<{ max: string | null }>(`SELECT max(${pgIdent(cursor)})::text AS max FROM ${from}`)).rows[0]
        ?.max ?? null)
    : null;
  return { columns, incremental, where, from, plans, lakeName, lakeKey, newCursor };
}
