import { mkdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdentifier, quoteLiteral } from '../../engine/duckdb.js';
import type { CatalogColumn, DeleteFileFacts, NewDataFile, TableFileAt } from './catalog-types.js';
import type { CatalogWrite } from './catalog-write.js';
import {
  describeDataFile,
  fieldIdSchemaOf,
  fieldIdsOption,
  fileRowsSql,
  parquetSizes,
  storedRowsSql,
} from './data-files.js';
import { mark } from '../../../support/debug-timing.js';

/**
 * Whether rows of a table with these columns can be merged with delete files. Positions are DuckDB's virtual
 * columns `file_row_number` and `file_index`; a real column of either name hides them (DuckDB refuses the one and
 * would silently read the other), so such a table is rewritten whole instead.
 */
export function mergeableColumns(names: readonly string[]): boolean {
  return !names.some((name) => ['file_row_number', 'file_index'].includes(name.toLowerCase()));
}

export interface MergeInput {
  write: CatalogWrite;
  connection: DuckDBConnection;
  /** Opens another connection to the same instance: delete files are written over several at once. */
  connect?: () => Promise<DuckDBConnection>;
  tableId: number;
  columns: readonly CatalogColumn[];
  /** The columns that identify a row: a changed row replaces the row with its key. */
  key: readonly string[];
  /** The table's files as the snapshot before this one has them. */
  current: readonly TableFileAt[];
  mappings: ReadonlyMap<number, ReadonlyMap<number, string>>;
  /** The changed rows, written (with field ids) under the table's path. */
  changed: readonly NewDataFile[];
  /** Turns a path relative to the table into the path to read or write. */
  toAbsolute: (tableRelative: string) => string;
  /** Where this snapshot's delete files go, relative to the table. */
  deletesDir: string;
  /** The snapshot since which the table has had its current columns (tableRowsSql). */
  columnsSince?: number;
  /**
   * Delete detection: SQL of every key the source has now (named as the key columns). A row of the table whose key
   * is not among them was deleted in the source, and is deleted here too.
   */
  presentKeys?: string;
  /** Change data capture: SQL of the keys the source deleted (named as the key columns); their rows are deleted. */
  deletedKeys?: string;
  /**
   * Soft deletes: a row the source lost is not removed but written again with `column` set to `at` (once: a row
   * already marked is left as it is), in a data file at `markedFile`, relative to the table.
   */
  softDelete?: { column: string; at: string };
  markedFile?: string;
  /**
   * Columns that do not make a changed row differ from the row it replaces (an incremental sync's `_synced_at`).
   * Given, a change of at most IDENTICAL_CHECK_ROWS rows, none of them new, each equal but for these to the live row
   * of its key, changes nothing: the merge writes no file and reports `unchanged` (what an incremental sync reads
   * again at its cursor's last value, when nothing else changed).
   */
  ignoredWhenCompared?: readonly string[];
}

/** What a merge did to the rows the table had: replaced by a changed row, or deleted because the source has no such key. */
export interface MergeCounts {
  replaced: number;
  deleted: number;
  /** Every changed row was the table's row already (MergeInput.ignoredWhenCompared): nothing was written. */
  unchanged?: boolean;
}

/** The most changed rows compared with the rows they replace before a merge (a merge of more is written as one). */
const IDENTICAL_CHECK_ROWS = 1000;

/**
 * An incremental merge the DuckLake way: the changed rows become data files of their own, and every older file
 * holding a row with one of their keys gets a positional delete file naming those rows. A file keeps one delete
 * file per snapshot, so the new one lists its earlier deleted positions too. The cost follows the change: only
 * the key columns of the older files are read. Returns how many older rows the changed ones replaced.
 */
export async function mergeChangedRows(input: MergeInput): Promise<MergeCounts> {
  const { connection, columns, toAbsolute } = input;
  const keys = input.key.map((k) => quoteIdentifier(k)).join(', ');
  const keyColumns = columns.filter((c) => input.key.includes(c.name));
  if (keyColumns.length !== input.key.length) throw new Error('Every merge key column must be a column of the table.');
  if (!mergeableColumns(columns.map((c) => c.name)))
    throw new Error('A table with a column named file_row_number or file_index is rewritten whole, not merged.');
  const changedKeys =
    input.changed.length === 0
      ? undefined
      : `(${input.changed
          .map(
            (file) =>
              `SELECT ${keys} FROM (${fileRowsSql({ path: file.path, mappingId: null }, keyColumns, toAbsolute, new Map(), false)})`,
          )
          .join(' UNION ALL ')})`;
  // A key the source still has matches as equal; a NULL in a key (a key a person chose) matches a NULL. With soft
  // deletes, a row marked before is gone already.
  const soft = input.softDelete;
  const markColumn = soft ? columns.find((c) => c.name === soft.column) : undefined;
  if (soft && !markColumn) throw new Error(`A table with soft deletes must have a ${soft.column} column.`);
  const sameKey = input.key
    .map((k) => `d.${quoteIdentifier(k)} IS NOT DISTINCT FROM k.${quoteIdentifier(k)}`)
    .join(' AND ');
  const unmarked = markColumn ? ` WHERE d.${quoteIdentifier(markColumn.name)} IS NULL` : '';
  // Rows deleted at the source: those whose key it no longer has, or whose key it says it deleted.
  const goneFrom =
    input.presentKeys !== undefined
      ? (rows: string): string => `${rows} ANTI JOIN (${input.presentKeys}) k ON ${sameKey}${unmarked}`
      : input.deletedKeys !== undefined
        ? (rows: string): string => `${rows} SEMI JOIN (${input.deletedKeys}) k ON ${sameKey}${unmarked}`
        : undefined;
  const scanColumns = markColumn ? [...keyColumns, markColumn] : keyColumns;
  // Where the changed keys (and, detecting deletes, the keys the source no longer has) are in the table's files:
  // one scan of the key columns of every file with field ids (in parallel, whatever their number), positions kept
  // per file; files read by name one by one. `gone` tells a deleted row from a replaced one.
  const withIds = input.current.filter((f) => f.mappingId === null);
  const hits: Hit[] = [];
  if (withIds.length > 0) {
    // Files written with the table's current columns hold the key columns by name: a plain scan, DuckDB's fastest.
    const named = withIds.every(
      (f) => input.columnsSince !== undefined && f.beginSnapshot !== undefined && f.beginSnapshot >= input.columnsSince,
    );
    const scan = `read_parquet([${withIds.map((f) => quoteLiteral(toAbsolute(f.path))).join(', ')}],
                             ${named ? '' : `schema = ${fieldIdSchemaOf(scanColumns)}, `}file_row_number = true) d`;
    const found = [
      ...(changedKeys
        ? [
            `SELECT d.file_index, d.file_row_number AS pos, false AS gone FROM ${scan} SEMI JOIN ${changedKeys} n USING (${keys})`,
          ]
        : []),
      ...(goneFrom ? [`SELECT d.file_index, d.file_row_number AS pos, true AS gone FROM ${goneFrom(scan)}`] : []),
    ];
    // A table of the private instance, not a temporary one: the delete files are written over several connections.
    await connection.run(
      `CREATE OR REPLACE TABLE lake_merge_hits AS ${found.length > 0 ? found.join(' UNION ALL ') : 'SELECT 0::UBIGINT AS file_index, 0::BIGINT AS pos, false AS gone WHERE false'}`,
    );
    const touched = new Set(
      (await connection.runAndReadAll('SELECT DISTINCT file_index FROM lake_merge_hits'))
        .getRowObjectsJS()
        .map((r) => Number(r.file_index)),
    );
    for (const [index, file] of withIds.entries())
      if (touched.has(index))
        hits.push({
          file,
          positions: `SELECT pos FROM lake_merge_hits WHERE file_index = ${index}`,
          gone: `SELECT pos FROM lake_merge_hits WHERE file_index = ${index} AND gone`,
        });
  }
  for (const file of input.current.filter((f) => f.mappingId !== null)) {
    const rows = `(${fileRowsSql(file, scanColumns, toAbsolute, input.mappings, true)}) d`;
    const gone = goneFrom ? `SELECT d.file_row_number AS pos FROM ${goneFrom(rows)}` : undefined;
    const replaced = changedKeys
      ? `SELECT d.file_row_number AS pos FROM ${rows} SEMI JOIN ${changedKeys} n USING (${keys})`
      : undefined;
    const positions = [replaced, gone].filter((q): q is string => q !== undefined);
    if (positions.length > 0) hits.push({ file, positions: positions.join(' UNION ALL '), ...(gone ? { gone } : {}) });
  }
  mark('merge: changed keys found');
  if (changedKeys && !goneFrom && (await changesNothing(input, hits))) {
    if (withIds.length > 0) await connection.run('DROP TABLE IF EXISTS lake_merge_hits');
    return { replaced: 0, deleted: 0, unchanged: true };
  }
  // Each touched file's delete file is written and counted on its own connection, as many at once as there are
  // cores (a small COPY runs on one thread: 12 files written one by one took ~60 ms of a 1% merge's ~450 ms); the
  // catalog records them after, in order, inside the commit.
  const lanes = [connection];
  const wanted = Math.min(hits.length, availableParallelism());
  while (lanes.length < wanted && input.connect) lanes.push(await input.connect());
  const written = await inLanes(lanes, hits, (lane, hit) => writeDeleteFile(input, lane, hit));
  const counts: MergeCounts = { replaced: 0, deleted: 0 };
  /** Soft deletes: each touched file's rows the source lost, marked, to be written again as one file. */
  const marked: string[] = [];
  for (const [index, { file, gone }] of hits.entries()) {
    const result = written[index];
    if (!result) continue;
    await input.write.setDeletes(input.tableId, file.dataFileId, result.deletes, result.count);
    counts.deleted += result.deleted;
    counts.replaced += result.count - result.deleted;
    if (soft && gone && result.deleted > 0)
      marked.push(
        `SELECT * EXCLUDE (file_row_number) REPLACE (TIMESTAMPTZ ${quoteLiteral(soft.at)} AS ${quoteIdentifier(soft.column)})
           FROM (${fileRowsSql(file, columns, toAbsolute, input.mappings, true)})
          WHERE file_row_number IN (SELECT pos FROM (${gone}) WHERE pos NOT IN (${deletedBeforeSql(input, file)}))`,
      );
  }
  mark('merge: delete files written');
  const added = [...input.changed];
  if (marked.length > 0) added.push(await writeMarked(input, marked.join(' UNION ALL ')));
  if (withIds.length > 0) await connection.run('DROP TABLE IF EXISTS lake_merge_hits');
  await input.write.addFiles(input.tableId, added);
  return counts;
}

interface Hit {
  file: TableFileAt;
  /** SQL of the file's positions whose rows a changed row replaces or the source lost. */
  positions: string;
  /** SQL of those positions whose rows the source lost. */
  gone?: string;
}

/**
 * Whether the changed rows are the table's live rows already (MergeInput.ignoredWhenCompared): as many live rows
 * at the positions their keys were found as there are changed rows, and the same rows both ways, compared as
 * multisets (NULLs equal). Any doubt (a comparison DuckDB refuses, a type it cannot compare) answers no, and the
 * rows are merged as any change is.
 */
async function changesNothing(input: MergeInput, hits: readonly Hit[]): Promise<boolean> {
  if (!input.ignoredWhenCompared || hits.length === 0) return false;
  const ignored = new Set(input.ignoredWhenCompared.map((name) => name.toLowerCase()));
  const changedRows = input.changed.reduce((sum, file) => sum + file.recordCount, 0);
  if (changedRows === 0 || changedRows > IDENTICAL_CHECK_ROWS) return false;
  const compared = input.columns.filter((c) => !ignored.has(c.name.toLowerCase()));
  const names = compared.map((c) => quoteIdentifier(c.name)).join(', ');
  const changed = input.changed
    .map(
      (file) =>
        `SELECT ${names} FROM (${fileRowsSql({ path: file.path, mappingId: null }, compared, input.toAbsolute, new Map(), false)})`,
    )
    .join(' UNION ALL ');
  try {
    // The few positions as constants, which DuckDB applies inside the scan (skipping row groups without them).
    const found: { file: TableFileAt; positions: string[] }[] = [];
    for (const { file, positions } of hits)
      found.push({
        file,
        positions: (await input.connection.runAndReadAll(`SELECT DISTINCT pos FROM (${positions})`))
          .getRows()
          .map(([pos]) => String(pos)),
      });
    if (found.reduce((sum, hit) => sum + hit.positions.length, 0) > IDENTICAL_CHECK_ROWS) return false;
    const live = found
      .map(
        ({ file, positions }) =>
          `SELECT ${names} FROM (${fileRowsSql(file, compared, input.toAbsolute, input.mappings, true)})
            WHERE file_row_number IN (-1, ${positions.join(', ')}) AND file_row_number NOT IN (${deletedBeforeSql(input, file)})`,
      )
      .join(' UNION ALL ');
    const [row] = (
      await input.connection.runAndReadAll(
        `SELECT (SELECT count(*) FROM (${live})) AS live,
                (SELECT count(*) FROM ((${changed}) EXCEPT ALL (${live}))) AS only_changed,
                (SELECT count(*) FROM ((${live}) EXCEPT ALL (${changed}))) AS only_live`,
      )
    ).getRowObjectsJS();
    return Number(row?.live) === changedRows && Number(row?.only_changed) === 0 && Number(row?.only_live) === 0;
  } catch {
    return false;
  }
}

/** The positions a file's earlier delete file lists (none without one). */
function deletedBeforeSql(input: MergeInput, file: TableFileAt): string {
  return file.deletePath
    ? `SELECT pos FROM read_parquet(${quoteLiteral(input.toAbsolute(file.deletePath))})`
    : 'SELECT NULL::BIGINT AS pos WHERE false';
}

/**
 * Writes a touched file's new delete file: rows still in the table (not deleted before) whose key a changed row has
 * or the source lost, with the earlier deletes. Undefined when none of its live rows went (no file is kept).
 */
async function writeDeleteFile(
  input: MergeInput,
  connection: DuckDBConnection,
  { file, positions, gone }: Hit,
): Promise<{ deletes: DeleteFileFacts; count: number; deleted: number } | undefined> {
  const deletedBefore = deletedBeforeSql(input, file);
  const path = join(input.deletesDir, `delete-${file.dataFileId}.parquet`);
  const absolute = input.toAbsolute(path);
  mkdirSync(dirname(absolute), { recursive: true, mode: 0o700 });
  // The earlier positions and the new ones, each once (a row deleted before may be found again: its key was read
  // from the file as it was written), in order. One read of the earlier delete file: a fifth faster per file than
  // reading it again to leave its positions out of the new ones (13 files with 40,000 positions each).
  const written = await connection.run(
    `COPY (SELECT ${quoteLiteral(input.toAbsolute(file.path))} AS file_path, pos
             FROM (${deletedBefore} UNION ALL SELECT pos FROM (${positions})) GROUP BY pos ORDER BY pos)
       TO ${quoteLiteral(absolute)} (FORMAT parquet)`,
  );
  const count = Number(written.rowsChanged) - (file.deleteCount ?? 0);
  if (count === 0) {
    rmSync(absolute, { force: true });
    return undefined;
  }
  const deleted = gone
    ? Number(
        (
          await connection.runAndReadAll(
            `SELECT count(DISTINCT pos) AS n FROM (${gone}) WHERE pos NOT IN (${deletedBefore})`,
          )
        ).getRowObjectsJS()[0]?.n ?? 0,
      )
    : 0;
  return { deletes: { path, deleteCount: Number(written.rowsChanged), ...parquetSizes(absolute) }, count, deleted };
}

/** Runs `work` on every item, each lane (a connection) taking the next item as it finishes; results in item order. */
async function inLanes<T, R>(
  lanes: readonly DuckDBConnection[],
  items: readonly T[],
  work: (lane: DuckDBConnection, item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  // Every lane ends before this returns, even after a failure: the caller closes the connections next.
  const settled = await Promise.allSettled(
    lanes.map(async (lane) => {
      while (!failed && next < items.length) {
        const index = next++;
        try {
          results[index] = await work(lane, items[index] as T);
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    }),
  );
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
  return results;
}

/** Writes the rows a soft delete marked as a data file of the table, with its field ids, and describes it. */
async function writeMarked(input: MergeInput, rowsSql: string): Promise<NewDataFile> {
  if (!input.markedFile) throw new Error('A soft delete needs a file to write the marked rows to.');
  const absolute = input.toAbsolute(input.markedFile);
  mkdirSync(dirname(absolute), { recursive: true, mode: 0o700 });
  await input.connection.run(
    `COPY (${storedRowsSql(input.columns, rowsSql)}) TO ${quoteLiteral(absolute)} (FORMAT parquet, COMPRESSION zstd, ${fieldIdsOption(input.columns)})`,
  );
  return describeDataFile(input.connection, absolute, input.markedFile, input.columns);
}
