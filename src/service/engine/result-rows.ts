import type { DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import { quoteLiteral } from './duckdb.js';
import { setOwn, vectorConverterFor, type JsonValue, type VectorConverter } from './json-values.js';

/** A column of a written result, as the engine typed it. */
export interface ResultColumn {
  name: string;
  type: string;
}

export type JsonRow = Record<string, JsonValue>;

/**
 * A JSON page holds at most about this many bytes: a page of large rows comes back shorter (has_more stays true),
 * and a single row larger than this cannot be served as JSON at all (the Parquet download still has it).
 */
export const INLINE_PAGE_MAX_BYTES = 16 * 2 ** 20;
/** A row group whose rows average more than a page, or that is this large, is not read into this process at all. */
export const ROW_GROUP_MAX_BYTES = 512 * 2 ** 20;
/** The first page an engine reads right after writing a result: at most a full page of rows, in this many bytes. */
export const FIRST_PAGE_MAX_ROWS = 1000;
export const FIRST_PAGE_MAX_BYTES = 2 ** 20;

/** Roughly the bytes a value takes as JSON; exact enough to keep a page's size bounded. */
export function jsonSize(value: JsonValue): number {
  if (typeof value === 'string') return value.length + 2;
  if (value === null || typeof value !== 'object') return 8;
  let size = 2;
  if (Array.isArray(value)) for (const item of value) size += jsonSize(item) + 1;
  else for (const key in value) size += key.length + 4 + jsonSize(value[key] as JsonValue);
  return size;
}

export function convertChunk(
  chunk: DuckDBDataChunk,
  columns: readonly string[],
  converters: readonly VectorConverter[],
): JsonRow[] {
  const vectors = columns.map((_, c) => chunk.getColumnVector(c));
  const rows: JsonRow[] = new Array(chunk.rowCount);
  for (let r = 0; r < rows.length; r++) {
    const row: JsonRow = {};
    for (let c = 0; c < columns.length; c++)
      setOwn(row, columns[c] as string, (converters[c] as VectorConverter)(vectors[c] as never, r));
    rows[r] = row;
  }
  return rows;
}

/** Rows [start, start + rows) of a result file and their uncompressed size, from the file's own metadata. */
export interface RowGroup {
  start: number;
  rows: number;
  bytes: number;
}

export async function readRowGroups(connection: DuckDBConnection, file: string): Promise<RowGroup[]> {
  const read = await connection.runAndReadAll(
    `SELECT row_group_id, any_value(row_group_num_rows)::BIGINT AS rows, sum(total_uncompressed_size)::BIGINT AS bytes
     FROM parquet_metadata(${quoteLiteral(file)}) GROUP BY row_group_id ORDER BY row_group_id`,
  );
  let start = 0;
  return read.getRowObjectsJS().map((row) => {
    const group = { start, rows: Number(row.rows), bytes: Number(row.bytes) };
    start += group.rows;
    return group;
  });
}

/** Whether rows [offset, offset + limit) lie only in row groups small enough to bring into this process. */
export function servable(
  groups: readonly RowGroup[],
  offset: number,
  limit: number,
): { ok: true } | { ok: false; row: number } {
  for (const group of groups) {
    if (group.start >= offset + limit || group.start + group.rows <= offset) continue;
    if (group.bytes > ROW_GROUP_MAX_BYTES || group.bytes / Math.max(1, group.rows) > INLINE_PAGE_MAX_BYTES)
      return { ok: false, row: Math.max(offset, group.start) + 1 };
  }
  return { ok: true };
}

/** Types whose values have a size of their own, never more than a few dozen bytes. */
const FIXED_WIDTH =
  /^(BOOLEAN|U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|FLOAT|DOUBLE|DECIMAL\(\d+,\s*\d+\)|DATE|TIME|TIME WITH TIME ZONE|TIMESTAMP(_S|_MS|_NS)?|TIMESTAMP WITH TIME ZONE|INTERVAL|UUID|"NULL")$/;

export interface FirstPage {
  /** The result's columns as the file holds them, which is what every page of it shows. */
  columns: ResultColumn[];
  /** Rows from the start, at most FIRST_PAGE_MAX_ROWS in about FIRST_PAGE_MAX_BYTES; empty when the first rows are too large. */
  rows: JsonRow[];
}

/**
 * The columns and first rows of a result just written, read back from the file on the connection that wrote it:
 * the same rows every later page reads from the file, without a second engine. The Parquet round trip changes some
 * types (an ENUM is read back as VARCHAR, TIMESTAMP_S as TIMESTAMP, a fixed-size array as a list), so the columns
 * come from this read, not from the prepared statement.
 */
export async function readFirstPage(
  connection: DuckDBConnection,
  file: string,
  rowCount: number,
  preparedTypes: readonly string[],
): Promise<FirstPage> {
  const limit = Math.min(FIRST_PAGE_MAX_ROWS, rowCount);
  // Row groups of huge values are not brought into the process; the pages of such a result are refused later. Rows
  // of fixed-width values only are small by construction, and need no look at the file's metadata (~5 ms).
  const bounded =
    limit === 0 ||
    preparedTypes.every((type) => FIXED_WIDTH.test(type)) ||
    servable(await readRowGroups(connection, file), 0, limit).ok;
  const stream = await connection.stream(
    `SELECT * FROM read_parquet(${quoteLiteral(file)}) LIMIT ${bounded ? limit : 0}`,
  );
  const names = stream.columnNames();
  const types = stream.columnTypes();
  const columns = names.map((name, i) => ({ name, type: String(types[i]) }));
  const converters = types.map((type) => vectorConverterFor(type));
  const rows: JsonRow[] = [];
  let bytes = 0;
  while (rows.length < limit) {
    const chunk = await stream.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    for (const row of convertChunk(chunk, names, converters)) {
      bytes += jsonSize(row);
      if (bytes > FIRST_PAGE_MAX_BYTES || rows.length >= limit) return { columns, rows };
      rows.push(row);
    }
  }
  return { columns, rows };
}
