import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LakeClient } from '../../client/lake-client.js';
import { loadDuckDB, OFFLINE_CONFIG, quoteLiteral } from '../../service/engine/duckdb.js';
import { vectorConverterFor } from '../../service/engine/json-values.js';
import { convertChunk, type JsonRow } from '../../service/engine/result-rows.js';
import type { CommandContext } from '../context.js';
import { downloadResult, queryResultFile } from './download.js';

/**
 * Reads a large result from its Parquet file instead of page by page: one signed download (resumed if it breaks),
 * then DuckDB streams the rows in chunks, converted to the same exact JSON values the API's pages carry, so every
 * output format prints them as it prints pages. The file is a private temporary one, removed at the end.
 */
export async function forEachResultChunk(
  ctx: CommandContext,
  client: LakeClient,
  queryId: string,
  limit: number,
  onRows: (rows: JsonRow[]) => Promise<void> | void,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lake-result-'));
  const file = join(dir, 'result.parquet');
  try {
    await downloadResult(ctx, client, queryId, file, () => queryResultFile(client, queryId), { quiet: true });
    const duckdb = await loadDuckDB();
    const instance = await duckdb.DuckDBInstance.create(':memory:', { ...OFFLINE_CONFIG, threads: '2' });
    const connection = await instance.connect();
    try {
      const stream = await connection.stream(
        `SELECT * FROM read_parquet(${quoteLiteral(file)})${Number.isFinite(limit) ? ` LIMIT ${limit}` : ''}`,
      );
      const columns = stream.columnNames();
      const converters = stream.columnTypes().map((type) => vectorConverterFor(type));
      for (let chunk = await stream.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await stream.fetchChunk())
        await onRows(convertChunk(chunk, columns, converters));
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
