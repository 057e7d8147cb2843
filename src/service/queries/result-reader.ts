import type { DuckDBConnection, DuckDBType } from '@duckdb/node-api';
import { openPrivilegedConnection, quoteLiteral } from '../engine/duckdb.js';
import { converterFor, type JsonValue } from '../engine/json-values.js';
import type { ResultColumn } from './store.js';

export interface ResultPage {
  columns: string[];
  rows: Record<string, JsonValue>[];
}

/**
 * Reads pages of result Parquet files as exact JSON rows. One private DuckDB instance serves every read; it never
 * runs user SQL, only the fixed page query below over files lake wrote itself.
 */
export class ResultReader {
  private connection: Promise<{ connection: DuckDBConnection; close(): void }> | undefined;

  private open(): Promise<{ connection: DuckDBConnection; close(): void }> {
    this.connection ??= openPrivilegedConnection({ threads: 2 });
    return this.connection;
  }

  async describe(file: string): Promise<ResultColumn[]> {
    const { connection } = await this.open();
    const described = await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quoteLiteral(file)})`);
    return described.getRowObjectsJS().map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
  }

  async page(file: string, offset: number, limit: number): Promise<ResultPage> {
    const { connection } = await this.open();
    const reader = await connection.runAndReadAll(`SELECT * FROM read_parquet(${quoteLiteral(file)}) LIMIT ${limit} OFFSET ${offset}`);
    const columns = reader.columnNames();
    const converters = reader.columnTypes().map((type: DuckDBType) => converterFor(type));
    const values = reader.getColumns();
    const rows: Record<string, JsonValue>[] = new Array(reader.currentRowCount);
    for (let r = 0; r < rows.length; r++) {
      const row: Record<string, JsonValue> = {};
      for (let c = 0; c < columns.length; c++) row[columns[c] as string] = (converters[c] as (v: unknown) => JsonValue)((values[c] as unknown[])[r] as never);
      rows[r] = row;
    }
    return { columns, rows };
  }

  async close(): Promise<void> {
    const open = this.connection;
    this.connection = undefined;
    if (open) (await open).close();
  }
}
