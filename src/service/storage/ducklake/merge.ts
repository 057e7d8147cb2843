import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdentifier, quoteLiteral } from '../../engine/duckdb.js';
import type { CatalogColumn, NewDataFile, TableFileAt } from './catalog-types.js';
import type { CatalogWrite } from './catalog-write.js';
import { fieldIdSchemaOf, fileRowsSql } from './data-files.js';
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
}

/**
 * An incremental merge the DuckLake way: the changed rows become data files of their own, and every older file
 * holding a row with one of their keys gets a positional delete file naming those rows. A file keeps one delete
 * file per snapshot, so the new one lists its earlier deleted positions too. The cost follows the change: only
 * the key columns of the older files are read. Returns how many older rows the changed ones replaced.
 */
export async function mergeChangedRows(input: MergeInput): Promise<number> {
  const { connection, columns, toAbsolute } = input;
  const keys = input.key.map((k) => quoteIdentifier(k)).join(', ');
  const keyColumns = columns.filter((c) => input.key.includes(c.name));
  if (keyColumns.length !== input.key.length) throw new Error('Every merge key column must be a column of the table.');
  if (!mergeableColumns(columns.map((c) => c.name)))
    throw new Error('A table with a column named file_row_number or file_index is rewritten whole, not merged.');
  const changedKeys = `(${input.changed
    .map(
      (file) =>
        `SELECT ${keys} FROM (${fileRowsSql({ path: file.path, mappingId: null }, keyColumns, toAbsolute, new Map(), false)})`,
    )
    .join(' UNION ALL ')})`;
  // Where the changed keys are in the table's files: one scan of the key columns of every file with field ids
  // (in parallel, whatever their number), positions kept per file; files read by name one by one.
  const withIds = input.current.filter((f) => f.mappingId === null);
  const hits: { file: TableFileAt; positions: string }[] = [];
  if (withIds.length > 0) {
    // Files written with the table's current columns hold the key columns by name: a plain scan, DuckDB's fastest.
    const named = withIds.every(
      (f) => input.columnsSince !== undefined && f.beginSnapshot !== undefined && f.beginSnapshot >= input.columnsSince,
    );
    await connection.run(
      `CREATE OR REPLACE TEMP TABLE lake_merge_hits AS
         SELECT d.file_index, d.file_row_number AS pos
           FROM read_parquet([${withIds.map((f) => quoteLiteral(toAbsolute(f.path))).join(', ')}],
                             ${named ? '' : `schema = ${fieldIdSchemaOf(keyColumns)}, `}file_row_number = true) d
           SEMI JOIN ${changedKeys} n USING (${keys})`,
    );
    const touched = new Set(
      (await connection.runAndReadAll('SELECT DISTINCT file_index FROM lake_merge_hits'))
        .getRowObjectsJS()
        .map((r) => Number(r.file_index)),
    );
    for (const [index, file] of withIds.entries())
      if (touched.has(index))
        hits.push({ file, positions: `SELECT pos FROM lake_merge_hits WHERE file_index = ${index}` });
  }
  for (const file of input.current.filter((f) => f.mappingId !== null))
    hits.push({
      file,
      positions: `SELECT d.file_row_number AS pos FROM (${fileRowsSql(file, keyColumns, toAbsolute, input.mappings, true)}) d SEMI JOIN ${changedKeys} n USING (${keys})`,
    });
  mark('merge: changed keys found');
  let replaced = 0;
  for (const { file, positions } of hits) {
    const deletedBefore = file.deletePath
      ? `SELECT pos FROM read_parquet(${quoteLiteral(toAbsolute(file.deletePath))})`
      : 'SELECT NULL::BIGINT AS pos WHERE false';
    // Rows still in the table (not deleted before) whose key a changed row has, with the earlier deletes: the
    // file's new delete file, written at once (a file none of whose live rows changed gets none).
    const fresh = `SELECT pos FROM (${positions}) WHERE pos NOT IN (${deletedBefore})`;
    const path = join(input.deletesDir, `delete-${file.dataFileId}.parquet`);
    const absolute = toAbsolute(path);
    mkdirSync(dirname(absolute), { recursive: true, mode: 0o700 });
    const written = await connection.run(
      `COPY (SELECT ${quoteLiteral(toAbsolute(file.path))} AS file_path, pos FROM (${deletedBefore} UNION ALL ${fresh}) ORDER BY pos)
         TO ${quoteLiteral(absolute)} (FORMAT parquet)`,
    );
    const count = Number(written.rowsChanged) - (file.deleteCount ?? 0);
    if (count === 0) {
      rmSync(absolute, { force: true });
      continue;
    }
    const meta = (
      await connection.runAndReadAll(
        `SELECT file_size_bytes, footer_size FROM parquet_file_metadata(${quoteLiteral(absolute)})`,
      )
    ).getRowObjectsJS()[0] as { file_size_bytes: bigint; footer_size: bigint };
    await input.write.setDeletes(
      input.tableId,
      file.dataFileId,
      {
        path,
        deleteCount: Number(written.rowsChanged),
        fileSizeBytes: Number(meta.file_size_bytes),
        footerSize: Number(meta.footer_size),
      },
      count,
    );
    replaced += count;
  }
  mark('merge: delete files written');
  if (withIds.length > 0) await connection.run('DROP TABLE IF EXISTS lake_merge_hits');
  await input.write.addFiles(input.tableId, input.changed);
  return replaced;
}
