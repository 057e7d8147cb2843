import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection, DuckDBType } from '@duckdb/node-api';
import { mark } from '../../support/debug-timing.js';
import { temporaryFolder } from '../../support/temporary-folder.js';
import type { LakeClient } from '../../client/lake-client.js';
import { loadDuckDB, OFFLINE_CONFIG, quoteIdentifier, quoteLiteral } from '../../service/engine/duckdb.js';
import { vectorConverterFor } from '../../service/engine/json-values.js';
import { convertChunk, type JsonRow } from '../../service/engine/result-rows.js';
import type { CommandContext } from '../context.js';
import { downloadResult, queryResultFile } from './download.js';

/** Where a result file's rows go: as rows for any format, or, for CSV and TSV, as finished text when that is exact. */
export interface ResultSink {
  rows(rows: JsonRow[]): Promise<void>;
  /** CSV or TSV lines, header excluded, as bytes; absent for other formats. */
  text?: { format: 'csv' | 'tsv'; write(bytes: Buffer): Promise<void> };
}

/**
 * DuckDB type ids whose text (CAST … AS VARCHAR) is exactly what lake's writers print of the value the API's pages
 * carry: booleans, integers of every width, decimals, dates and plain strings. Other types (floats, timestamps,
 * nested values, JSON) go through the same JSON conversion the pages use.
 */
const TEXT_EXACT = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17, 19, 32]);
const VARCHAR = 17;

/** JavaScript's \s, which the CSV writer quotes at either end of a field, as RE2 spells it. */
const JS_SPACE = String.raw`[\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]`;

/**
 * One field as lake's CSV or TSV writer prints it (src/render/values.ts), as a DuckDB expression for DuckDB's own
 * CSV writer with quoting off: strings are quoted (CSV) or escaped (TSV) here; other types DuckDB writes as their
 * text, which is lake's; NULL is the writer's NULL text.
 */
function fieldSql(column: string, type: DuckDBType, format: 'csv' | 'tsv'): string {
  const name = quoteIdentifier(column);
  if (type.typeId !== VARCHAR) return name;
  if (format === 'tsv')
    return `replace(replace(replace(replace(${name}, '\\', '\\\\'), chr(9), '\\t'), chr(10), '\\n'), chr(13), '\\r')`;
  // One pattern, one pass over the text: a quote, a comma or a line break anywhere, or a space at either end.
  return `CASE WHEN regexp_matches(${name}, '[",\\r\\n]|^${JS_SPACE}|${JS_SPACE}$') THEN '"' || replace(${name}, '"', '""') || '"' ELSE ${name} END`;
}

/**
 * Reads a large result from its Parquet file instead of page by page: one signed download (resumed if it breaks),
 * then DuckDB streams it in chunks. CSV and TSV of types whose text DuckDB writes exactly as lake does are built by
 * DuckDB itself; everything else becomes the same exact JSON values the API's pages carry, so every format prints
 * them as it prints pages. The file is a private temporary one, removed at the end.
 */
export async function readResultFile(
  ctx: CommandContext,
  client: LakeClient,
  queryId: string,
  limit: number,
  sink: ResultSink,
): Promise<number | undefined> {
  const folder = temporaryFolder('lake-result-');
  const dir = folder.dir;
  const file = join(dir, 'result.parquet');
  try {
    await downloadResult(ctx, client, queryId, file, () => queryResultFile(client, queryId), { quiet: true });
    mark('result file downloaded');
    const duckdb = await loadDuckDB();
    const instance = await duckdb.DuckDBInstance.create(':memory:', { ...OFFLINE_CONFIG, threads: '2' });
    const connection = await instance.connect();
    try {
      // A LIMIT, even one past the last row, makes DuckDB read the file on one thread: only a real cut gets one.
      const source = `SELECT * FROM read_parquet(${quoteLiteral(file)})${Number.isFinite(limit) ? ` LIMIT ${limit}` : ''}`;
      return await stream(connection, source, sink, join(dir, 'lines.txt'));
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  } finally {
    folder.remove();
  }
}

/** Streams the rows to the sink; returns how many lines the text path wrote, or undefined when rows were given. */
async function stream(
  connection: DuckDBConnection,
  source: string,
  sink: ResultSink,
  linesFile: string,
): Promise<number | undefined> {
  const shape = await connection.run(`SELECT * FROM (${source}) LIMIT 0`);
  const names = shape.columnNames();
  const types = shape.columnTypes();
  const exact = types.every((t) => TEXT_EXACT.has(t.typeId) && t.alias === undefined);
  if (sink.text && exact) {
    const { format, write } = sink.text;
    const fields = names.map((name, i) => `${fieldSql(name, types[i] as DuckDBType, format)} AS c${i}`);
    const options = format === 'csv' ? "DELIMITER ',', NULL ''" : "DELIMITER chr(9), NULL '\\N'";
    // Each field is finished text: DuckDB's writer puts it down as it is (no quote, no escape), column by column,
    // in order, on its own threads.
    const written = await connection.run(
      `COPY (SELECT ${fields.join(', ') || "'' AS c0"} FROM (${source})) TO ${quoteLiteral(linesFile)} (FORMAT csv, HEADER false, QUOTE '', ESCAPE '', ${options})`,
    );
    mark('result file: lines written by DuckDB');
    // Large reads: a 400 MB export is 400 writes, not 6,000.
    for await (const bytes of createReadStream(linesFile, { highWaterMark: 2 ** 20 })) await write(bytes as Buffer);
    return Number(written.rowsChanged);
  }
  const rows = await connection.stream(source);
  const converters = rows.columnTypes().map((type) => vectorConverterFor(type));
  for (let chunk = await rows.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await rows.fetchChunk())
    await sink.rows(convertChunk(chunk, names, converters));
  return undefined;
}
