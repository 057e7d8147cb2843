import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdentifier, quoteLiteral } from '../../engine/duckdb.js';
import type { CatalogColumn, NewDataFile, TableFileAt } from './catalog-types.js';
import type { CatalogWrite } from './catalog-write.js';
import { fileRowsSql } from './data-files.js';

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
  const changedKeys = `(${input.changed
    .map(
      (file) =>
        `SELECT ${keys} FROM (${fileRowsSql({ path: file.path, mappingId: null }, keyColumns, toAbsolute, new Map(), false)})`,
    )
    .join(' UNION ALL ')})`;
  let replaced = 0;
  for (const file of input.current) {
    const rows = `(${fileRowsSql(file, keyColumns, toAbsolute, input.mappings, true)})`;
    const deletedBefore = file.deletePath
      ? `SELECT pos FROM read_parquet(${quoteLiteral(toAbsolute(file.deletePath))})`
      : 'SELECT NULL::BIGINT AS pos WHERE false';
    // Rows still in the table (not deleted before) whose key a changed row has.
    const fresh = `SELECT d.file_row_number AS pos FROM ${rows} d SEMI JOIN ${changedKeys} n USING (${keys})
                   WHERE d.file_row_number NOT IN (${deletedBefore})`;
    const count = Number(
      (await connection.runAndReadAll(`SELECT count(*) AS n FROM (${fresh})`)).getRowObjectsJS()[0]?.n ?? 0,
    );
    if (count === 0) continue;
    const path = join(input.deletesDir, `delete-${file.dataFileId}.parquet`);
    const absolute = toAbsolute(path);
    mkdirSync(dirname(absolute), { recursive: true, mode: 0o700 });
    const written = await connection.run(
      `COPY (SELECT ${quoteLiteral(toAbsolute(file.path))} AS file_path, pos FROM (${deletedBefore} UNION ALL ${fresh}) ORDER BY pos)
         TO ${quoteLiteral(absolute)} (FORMAT parquet)`,
    );
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
  await input.write.addFiles(input.tableId, input.changed);
  return replaced;
}
