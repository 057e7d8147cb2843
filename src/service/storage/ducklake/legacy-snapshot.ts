import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdentifier, quoteLiteral } from '../../engine/duckdb.js';
import type { CatalogColumn } from './catalog-types.js';
import type { CatalogWrite } from './catalog-write.js';
import { describeDataFile, parquetSizes } from './data-files.js';

/** A table's snapshot as lake recorded it before DuckLake: its files by layer, oldest first, and their merge key. */
export interface LegacySnapshot {
  /** Paths relative to the table's DuckLake path. */
  layers: readonly (readonly string[])[];
  mergeKey?: readonly string[];
}

/**
 * Registers a snapshot lake wrote before DuckLake as the table's files in a commit, without rewriting a byte of
 * it. Its files carry no field ids, so they are read through a name mapping. A layered snapshot (decision 36: each
 * layer replaces earlier rows by key) becomes what DuckLake says instead: every file, plus, for each file with
 * rows a later layer replaced, a positional delete file (written to `deletesDir`, a path relative to the table).
 */
export async function registerLegacySnapshot(
  write: CatalogWrite,
  connection: DuckDBConnection,
  table: { tableId: number; columns: readonly CatalogColumn[] },
  snapshot: LegacySnapshot,
  paths: { toAbsolute: (tableRelative: string) => string; deletesDir: string },
): Promise<void> {
  const mappingId = await write.nameMapping(table.tableId, table.columns);
  const key = (snapshot.mergeKey ?? []).map((k) => quoteIdentifier(k)).join(', ');
  for (const [index, layer] of snapshot.layers.entries()) {
    const later = snapshot.layers.slice(index + 1).flat();
    for (const file of layer) {
      const absolute = paths.toAbsolute(file);
      const described = await describeDataFile(connection, absolute, file, table.columns);
      const [dataFileId] = await write.addFiles(table.tableId, [{ ...described, mappingId }]);
      if (later.length === 0 || key === '') continue;
      // The rows of this file whose key a later layer holds: the layers' reads replaced them, so they are deleted.
      const newer = `read_parquet([${later.map((f) => quoteLiteral(paths.toAbsolute(f))).join(', ')}])`;
      const deletesPath = join(paths.deletesDir, `delete-${dataFileId}.parquet`);
      const deletesAbsolute = paths.toAbsolute(deletesPath);
      mkdirSync(dirname(deletesAbsolute), { recursive: true, mode: 0o700 });
      const written = await connection.run(
        `COPY (SELECT ${quoteLiteral(absolute)} AS file_path, o.file_row_number AS pos
                 FROM read_parquet(${quoteLiteral(absolute)}, file_row_number = true) o
                 SEMI JOIN (SELECT ${key} FROM ${newer}) n USING (${key})
                ORDER BY pos)
           TO ${quoteLiteral(deletesAbsolute)} (FORMAT parquet)`,
      );
      const deleted = Number(written.rowsChanged);
      if (deleted === 0) {
        rmSync(deletesAbsolute, { force: true });
        continue;
      }
      await write.setDeletes(
        table.tableId,
        dataFileId as number,
        { path: deletesPath, deleteCount: deleted, ...parquetSizes(deletesAbsolute) },
        deleted,
      );
    }
  }
}
