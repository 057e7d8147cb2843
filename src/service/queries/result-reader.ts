import type { DuckDBConnection, DuckDBInstance, DuckDBResult } from '@duckdb/node-api';
import { loadDuckDB, OFFLINE_CONFIG, quoteLiteral } from '../engine/duckdb.js';
import { vectorConverterFor, type VectorConverter } from '../engine/json-values.js';
import {
  convertChunk,
  INLINE_PAGE_MAX_BYTES,
  jsonSize,
  readRowGroups,
  servable,
  type JsonRow,
  type RowGroup,
} from '../engine/result-rows.js';
import { LakeServiceError } from '../core/errors.js';
import { groupDigits } from '../../support/group-digits.js';

export interface ResultPage {
  columns: string[];
  rows: JsonRow[];
}

/** A result being read front to back: an open stream, rows converted but not yet served, and where it stands. */
interface Cursor {
  connection: DuckDBConnection;
  stream: DuckDBResult;
  columns: string[];
  converters: VectorConverter[];
  pending: JsonRow[];
  pendingAt: number;
  exhausted: boolean;
  lastUsed: number;
}

/** Cursors kept open between requests, and how long an unused one lives. */
const MAX_OPEN_CURSORS = 16;
const CURSOR_IDLE_MS = 60_000;

function tooLargeForInline(rowNumber: number): LakeServiceError {
  return new LakeServiceError(
    'inline_row_too_large',
    `Row ${groupDigits(rowNumber)} of this result is larger than a JSON page can hold (${INLINE_PAGE_MAX_BYTES / 2 ** 20} MB). Download the result as Parquet: GET the query with format=files.`,
    { param: 'format' },
  );
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

  /** Whether this reader has started its engine: it does only for pages the query's own engine did not read. */
  get started(): boolean {
    return this.instance !== undefined;
  }

  async page(file: string, offset: number, limit: number): Promise<ResultPage> {
    const key = `${file}\n${offset}`;
    let cursor = this.cursors.get(key);
    this.cursors.delete(key);
    await this.assertServable(file, offset, limit);
    cursor ??= await this.openCursor(file, offset);
    const rows: JsonRow[] = [];
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
      const row = cursor.pending[cursor.pendingAt] as JsonRow;
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
    const verdict = servable(await this.rowGroups(file), offset, limit);
    if (!verdict.ok) throw tooLargeForInline(verdict.row);
  }

  private async rowGroups(file: string): Promise<RowGroup[]> {
    const cached = this.groups.get(file);
    if (cached) return cached;
    const { connection } = await this.open();
    const groups = await readRowGroups(connection, file);
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
      const stream = await connection.stream(
        `SELECT * FROM read_parquet(${quoteLiteral(file)})${offset > 0 ? ` OFFSET ${offset}` : ''}`,
      );
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
