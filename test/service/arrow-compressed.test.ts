import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import * as arrow from 'apache-arrow';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeCompressedArrowStream, zstdCodec } from '../../src/service/queries/arrow-compressed.js';
import { writeArrowStream } from '../../src/service/queries/arrow-stream.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('lake-arrow-zstd');

/** A Parquet file as a query's result is one, written by DuckDB in row groups of `rowGroup` rows. */
async function parquet(name: string, sql: string, rowGroup: number): Promise<string> {
  const path = join(dir, `${name}.parquet`);
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  await connection.run(`COPY (${sql}) TO '${path}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${rowGroup})`);
  connection.closeSync();
  instance.closeSync();
  return path;
}

/** The same file as lake's compressed stream (text columns at `dictionaries` as dictionaries) and as its plain one. */
async function bothStreams(
  file: string,
  dictionaries: number[],
  joined: { rows: number; bytes: number },
): Promise<{ compressed: arrow.Table; plain: arrow.Table; bytes: number }> {
  const target = `${file}.${joined.rows}.${joined.bytes}.arrows`;
  await writeCompressedArrowStream(file, target, new Set(dictionaries), joined);
  await writeArrowStream(file, `${file}.plain`);
  const bytes = readFileSync(target);
  return {
    compressed: arrow.tableFromIPC(bytes),
    plain: arrow.tableFromIPC(readFileSync(`${file}.plain`)),
    bytes: bytes.byteLength,
  };
}

/** Each column's values; a list's as an array (vectors of one list compare by their buffers, not their values). */
const values = (table: arrow.Table): unknown[][] =>
  table.schema.fields.map((_, position) =>
    [...(table.getChildAt(position) ?? [])].map((value) => (value instanceof arrow.Vector ? [...value] : value)),
  );

describe('a result as a zstd-compressed Arrow stream', () => {
  beforeAll(async () => {
    // The reader's codec: lake's own (its WebAssembly module starts once a process).
    arrow.compressionRegistry.set(arrow.CompressionType.ZSTD, await zstdCodec());
  });

  it('joins row groups into batches of the rows asked for, every value and null as the plain stream has it', async () => {
    const file = await parquet(
      'types',
      `SELECT range AS id, (range * 7 % 1000)::INTEGER AS small, range / 3.0 AS ratio,
              (range * 1.25)::DECIMAL(18,3) AS money, (range * 1.5)::DECIMAL(38,10) AS wide,
              CASE WHEN range % 5 = 0 THEN NULL ELSE range % 2 = 0 END AS flag,
              CASE WHEN range % 7 = 0 THEN NULL ELSE 'k' || (range % 13) END AS kind,
              CASE WHEN range % 11 = 0 THEN NULL ELSE 'unique ' || range END AS note,
              DATE '2024-01-01' + (range % 400)::INTEGER AS day,
              TIMESTAMP '2024-01-01' + INTERVAL (range) SECOND AS at,
              ('\\x' || lpad(printf('%x', range % 65536), 4, '0'))::BLOB AS raw
         FROM range(20480)`,
      2048,
    );
    const { compressed, plain } = await bothStreams(file, [6], { rows: 6144, bytes: 1 << 30 });
    expect(compressed.numRows).toBe(20_480);
    // Ten row groups of 2,048 rows (DuckDB's smallest) joined three at a time, the last batch what is left.
    expect(compressed.batches.map((b) => b.numRows)).toEqual([6144, 6144, 6144, 2048]);
    expect(compressed.schema.fields[6]?.type.typeId).toBe(arrow.Type.Dictionary);
    expect(values(compressed)).toEqual(values(plain));
    expect(compressed.get(0)?.toJSON()).toMatchObject({ flag: null, kind: null, note: null });
  });

  it('joins fewer rows when the bytes bound comes first, and batches of nested columns as they were read', async () => {
    const file = await parquet(
      'wide',
      `SELECT range AS id, repeat('x', 200) || range AS long_text, [range, range + 1] AS pair FROM range(16384)`,
      2048,
    );
    const { compressed, plain } = await bothStreams(file, [], { rows: 1_000_000, bytes: 1_000_000 });
    expect(values(compressed)).toEqual(values(plain));
    // A nested column is not joined: each row group stays a batch of its own.
    expect(compressed.batches.map((b) => b.numRows)).toEqual(Array(8).fill(2048));
    const flat = await parquet(
      'flat',
      `SELECT range AS id, repeat('x', 200) || range AS long_text FROM range(16384)`,
      2048,
    );
    const byBytes = await bothStreams(flat, [], { rows: 1_000_000, bytes: 1_000_000 });
    expect(values(byBytes.compressed)).toEqual(values(byBytes.plain));
    // About 440,000 bytes a row group as read: a third would take a batch past 1,000,000 bytes.
    expect(byBytes.compressed.batches.map((b) => b.numRows)).toEqual([4096, 4096, 4096, 4096]);
    // A row group larger than the bound alone is a batch as it was read.
    const alone = await bothStreams(flat, [], { rows: 1_000_000, bytes: 300_000 });
    expect(values(alone.compressed)).toEqual(values(alone.plain));
    expect(alone.compressed.batches.map((b) => b.numRows)).toEqual(Array(8).fill(2048));
  });

  it('grows a dictionary by deltas across joined batches, and compresses what repeats at a distance', async () => {
    // Indices that count up within a row group and repeat every 5,000 rows: only a batch longer than that repeat
    // holds it twice, for zstd to find.
    const sql = `SELECT 'customer ' || (range % 5000) AS customer FROM range(40000)`;
    const file = await parquet('repeats', sql, 2048);
    const rowGroups = await bothStreams(file, [0], { rows: 2048, bytes: 1 << 30 });
    const joined = await bothStreams(file, [0], { rows: 20_480, bytes: 1 << 30 });
    expect(values(joined.compressed)).toEqual(values(joined.plain));
    expect(values(rowGroups.compressed)).toEqual(values(rowGroups.plain));
    expect(joined.compressed.batches.length).toBe(2);
    expect(joined.bytes).toBeLessThan(rowGroups.bytes / 2);
  });
});
