import type { DuckDBConnection, DuckDBDataChunk, DuckDBInstance, DuckDBResult } from '@duckdb/node-api';
import { loadDuckDB, OFFLINE_CONFIG, quoteLiteral } from '../engine/duckdb.js';
import { vectorConverterFor, type JsonValue, type VectorConverter } from '../engine/json-values.js';
import { LakeServiceError } from '../errors.js';
import type { ResultColumn } from './store.js';

export interface ResultPage {
  columns: string[];
  rows: Record<string, JsonValue>[];
}

type Row = Record<string, JsonValue>;

/** A result being read front to back: an open stream, rows converted but not yet served, and where it stands. */
interface Cursor {
  connection: DuckDBConnection;
  stream: DuckDBResult;
  columns: string[];
  converters: VectorConverter[];
  pending: Row[];
  pendingAt: number;
  exhausted: boolean;
  lastUsed: number;
}

/**
 * A JSON page holds at most about this many bytes: a page of large rows comes back shorter (has_more stays true),
 * and a single row larger than this cannot be served as JSON at all (the Parquet download still has it).
 */
export const INLINE_PAGE_MAX_BYTES = 16 * 2 ** 20;
/** A row group whose rows average more than a page, or that is this large, is not read into this process at all. */
const ROW_GROUP_MAX_BYTES = 512 * 2 ** 20;

/** Rows [start, start + rows) of a result file and their uncompressed size, from the file's own metadata. */
interface RowGroup {
  start: number;
  rows: number;
  bytes: number;
}

/** Cursors kept open between requests, and how long an unused one lives. */
const MAX_OPEN_CURSORS = 16;
const CURSOR_IDLE_MS = 60_000;

/** Roughly the bytes a value takes as JSON; exact enough to keep a page's size bounded. */
function jsonSize(value: JsonValue): number {
  if (typeof value === 'string') return value.length + 2;
  if (value === null || typeof value !== 'object') return 8;
  let size = 2;
  if (Array.isArray(value)) for (const item of value) size += jsonSize(item) + 1;
  else for (const key in value) size += key.length + 4 + jsonSize(value[key] as JsonValue);
  return size;
}

function tooLargeForInline(rowNumber: number): LakeServiceError {
  return new LakeServiceError(
    'inline_row_too_large',
    `Row ${rowNumber.toLocaleString('en-US')} of this result is larger than a JSON page can hold (${INLINE_PAGE_MAX_BYTES / 2 ** 20} MB). Download the result as Parquet: GET the query with format=files.`,
    { param: 'format' },
  );
}

function convertChunk(chunk: DuckDBDataChunk, columns: readonly string[], converters: readonly VectorConverter[]): Row[] {
  const vectors = columns.map((_, c) => chunk.getColumnVector(c));
  const rows: Row[] = new Array(chunk.rowCount);
  for (let r = 0; r < rows.length; r++) {
    // Without a prototype, a column named __proto__ is a column like any other (on {} it would set the prototype).
    const row = Object.create(null) as Row;
    for (let c = 0; c < columns.length; c++) row[columns[c] as string] = (converters[c] as VectorConverter)(vectors[c] as never, r);
    rows[r] = row;
  }
  return rows;
}

/**
 * Reads pages of result Parquet files as exact JSON rows, from one private DuckDB instance that runs only these
 * fixed reads over files lake wrote itself. Clients page front to back, so each page leaves its stream open,
 * keyed by where the next page starts: the next request continues it instead of scanning to its offset again.
 * Any other offset opens a new stream there. Open streams are few and short-lived, so memory stays bounded.
 */
export class ResultReader {
  private instance: Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> | undefined;
  private readonly cursors = new Map<string, Cursor>();
  private readonly groups = new Map<string, RowGroup[]>();

  /** Starts the reader's engine in the background, so the first read does not wait for it. */
  warm(): void {
    void this.open().catch(() => undefined);
  }

  async describe(file: string): Promise<ResultColumn[]> {
    const { connection } = await this.open();
    const described = await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quoteLiteral(file)})`);
    return described.getRowObjectsJS().map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
  }

  async page(file: string, offset: number, limit: number): Promise<ResultPage> {
    const key = `${file}\n${offset}`;
    let cursor = this.cursors.get(key);
    this.cursors.delete(key);
    await this.assertServable(file, offset, limit);
    cursor ??= await this.openCursor(file, offset);
    const rows: Row[] = [];
    let bytes = 0;
    while (rows.length < limit) {
      if (cursor.pendingAt >= cursor.pending.length) {
        if (cursor.exhausted) break;
        const chunk = await cursor.stream.fetchChunk();
        if (!chunk || chunk.rowCount === 0) {
          cursor.exhausted = true;
          break;
        }
        cursor.pending = convertChunk(chunk, cursor.columns, cursor.converters);
        cursor.pendingAt = 0;
      }
      const row = cursor.pending[cursor.pendingAt] as Row;
      const size = jsonSize(row);
      if (size > INLINE_PAGE_MAX_BYTES && rows.length === 0) {
        cursor.connection.closeSync();
        throw tooLargeForInline(offset + 1);
      }
      // A page stops short rather than grow past its budget; the next page starts with this row.
      if (bytes + size > INLINE_PAGE_MAX_BYTES) break;
      bytes += size;
      rows.push(row);
      cursor.pendingAt++;
    }
    const finished = cursor.exhausted && cursor.pendingAt >= cursor.pending.length;
    if (finished) cursor.connection.closeSync();
    else this.keep(`${file}\n${offset + rows.length}`, cursor);
    return { columns: cursor.columns, rows };
  }

  /**
   * Refuses, before reading anything, a page that falls in a row group too large to bring into this process: a
   * value of hundreds of megabytes compresses to almost nothing in Parquet, so the file's size says nothing.
   */
  private async assertServable(file: string, offset: number, limit: number): Promise<void> {
    const groups = await this.rowGroups(file);
    for (const group of groups) {
      if (group.start >= offset + limit || group.start + group.rows <= offset) continue;
      if (group.bytes > ROW_GROUP_MAX_BYTES || group.bytes / Math.max(1, group.rows) > INLINE_PAGE_MAX_BYTES) throw tooLargeForInline(Math.max(offset, group.start) + 1);
    }
  }

  private async rowGroups(file: string): Promise<RowGroup[]> {
    const cached = this.groups.get(file);
    if (cached) return cached;
    const { connection } = await this.open();
    const read = await connection.runAndReadAll(
      `SELECT row_group_id, any_value(row_group_num_rows)::BIGINT AS rows, sum(total_uncompressed_size)::BIGINT AS bytes
       FROM parquet_metadata(${quoteLiteral(file)}) GROUP BY row_group_id ORDER BY row_group_id`,
    );
    let start = 0;
    const groups = read.getRowObjectsJS().map((row) => {
      const group = { start, rows: Number(row.rows), bytes: Number(row.bytes) };
      start += group.rows;
      return group;
    });
    if (this.groups.size >= MAX_OPEN_CURSORS * 4) this.groups.clear();
    this.groups.set(file, groups);
    return groups;
  }

  async close(): Promise<void> {
    for (const cursor of this.cursors.values()) cursor.connection.closeSync();
    this.cursors.clear();
    const open = this.instance;
    this.instance = undefined;
    if (open) {
      const { instance, connection } = await open;
      connection.closeSync();
      instance.closeSync();
    }
  }

  private open(): Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> {
    this.instance ??= (async () => {
      const duckdb = await loadDuckDB();
      const instance = await duckdb.DuckDBInstance.create(':memory:', { ...OFFLINE_CONFIG, threads: '2' });
      return { instance, connection: await instance.connect() };
    })();
    this.instance.catch(() => (this.instance = undefined));
    return this.instance;
  }

  private async openCursor(file: string, offset: number): Promise<Cursor> {
    const { instance } = await this.open();
    // A stream belongs to its connection, so each cursor has its own.
    const connection = await instance.connect();
    try {
      const stream = await connection.stream(`SELECT * FROM read_parquet(${quoteLiteral(file)})${offset > 0 ? ` OFFSET ${offset}` : ''}`);
      return {
        connection,
        stream,
        columns: stream.columnNames(),
        converters: stream.columnTypes().map((type) => vectorConverterFor(type)),
        pending: [],
        pendingAt: 0,
        exhausted: false,
        lastUsed: Date.now(),
      };
    } catch (error) {
      connection.closeSync();
      throw error;
    }
  }

  private keep(key: string, cursor: Cursor): void {
    const now = Date.now();
    cursor.lastUsed = now;
    this.cursors.get(key)?.connection.closeSync();
    this.cursors.set(key, cursor);
    for (const [k, c] of this.cursors) {
      if (this.cursors.size <= MAX_OPEN_CURSORS && now - c.lastUsed < CURSOR_IDLE_MS) continue;
      c.connection.closeSync();
      this.cursors.delete(k);
    }
  }
}
