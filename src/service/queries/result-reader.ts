import type { DuckDBConnection, DuckDBDataChunk, DuckDBInstance, DuckDBResult } from '@duckdb/node-api';
import { loadDuckDB, OFFLINE_CONFIG, quoteLiteral } from '../engine/duckdb.js';
import { converterFor, type JsonValue, type ValueConverter } from '../engine/json-values.js';
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
  converters: ValueConverter[];
  pending: Row[];
  pendingAt: number;
  exhausted: boolean;
  lastUsed: number;
}

/** Cursors kept open between requests, and how long an unused one lives. */
const MAX_OPEN_CURSORS = 16;
const CURSOR_IDLE_MS = 60_000;

function convertChunk(chunk: DuckDBDataChunk, columns: readonly string[], converters: readonly ValueConverter[]): Row[] {
  const values = chunk.getColumns();
  const rows: Row[] = new Array(chunk.rowCount);
  for (let r = 0; r < rows.length; r++) {
    const row: Row = {};
    for (let c = 0; c < columns.length; c++) row[columns[c] as string] = (converters[c] as ValueConverter)((values[c] as never[])[r] as never);
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
    cursor ??= await this.openCursor(file, offset);
    const rows: Row[] = [];
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
      const take = Math.min(limit - rows.length, cursor.pending.length - cursor.pendingAt);
      for (let i = 0; i < take; i++) rows.push(cursor.pending[cursor.pendingAt + i] as Row);
      cursor.pendingAt += take;
    }
    const finished = cursor.exhausted && cursor.pendingAt >= cursor.pending.length;
    if (finished) cursor.connection.closeSync();
    else this.keep(`${file}\n${offset + rows.length}`, cursor);
    return { columns: cursor.columns, rows };
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
        converters: stream.columnTypes().map((type) => converterFor(type)),
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
