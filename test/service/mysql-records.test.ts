import type { Readable } from 'node:stream';
import type * as mysql from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlConnection, mysqlQuery } from '../../src/service/connectors/mysql.js';
import { RECORDS_CHUNK_BYTES, recordStream } from '../../src/service/syncs/mysql-records.js';
import type { RecordChunk } from '../../src/service/syncs/segments.js';
import { readerSettings, useTestMysqlDatabase } from '../helpers/mysql.js';

/** The records a server builds, taken as chunks of whole records straight from the driver's rows. */
describe('records read from a MySQL connection', () => {
  const db = useTestMysqlDatabase();
  let connection: mysql.Connection;
  beforeAll(async () => {
    await db.query(
      `CREATE TABLE record_lines (id int PRIMARY KEY, line mediumtext NULL);
       INSERT INTO record_lines SELECT seq, CONCAT('"row ', seq, '",', REPEAT('x', seq % 200)) FROM seq_1_to_50000;
       INSERT INTO record_lines VALUES (0, REPEAT('y', ${RECORDS_CHUNK_BYTES + 1000})), (-1, NULL);`,
    );
    connection = mysqlConnection(readerSettings(db));
  });
  afterAll(() => {
    connection?.destroy();
  });

  const text = async (sql: string): Promise<string[][]> =>
    (await mysqlQuery(connection, sql)).map((row) => row.map(String));
  const readAll = async (stream: Readable): Promise<RecordChunk[]> => {
    const chunks: RecordChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk as RecordChunk);
    return chunks;
  };

  it('passes every record once, in order, in chunks of whole records no larger than a chunk', async () => {
    const chunks = await readAll(
      recordStream(connection, 'SELECT line FROM record_lines WHERE id > 0 ORDER BY id', []),
    );
    const expected = (await text('SELECT line FROM record_lines WHERE id > 0 ORDER BY id')).map((row) => `${row[0]}\n`);
    expect(Buffer.concat(chunks.map((c) => c.bytes)).toString()).toBe(expected.join(''));
    expect(chunks.reduce((sum, c) => sum + c.records, 0)).toBe(50_000);
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) {
      expect(chunk.bytes.length).toBeLessThanOrEqual(RECORDS_CHUNK_BYTES);
      expect(chunk.bytes.at(-1)).toBe(0x0a);
      const lengths = chunk.bytes
        .toString()
        .split('\n')
        .slice(0, -1)
        .map((l) => l.length + 1);
      expect(lengths).toHaveLength(chunk.records);
      expect(chunk.longest).toBe(Math.max(...lengths));
    }
  });

  it('holds no more than a few chunks while nobody reads them: the connection waits', async () => {
    const stream = recordStream(connection, 'SELECT line FROM record_lines WHERE id > 0 ORDER BY id', []);
    // Started, then left unread: without backpressure every one of the ~30 chunks would be waiting here.
    stream.once('readable', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stream.readableLength).toBeGreaterThan(0);
    expect(stream.readableLength).toBeLessThanOrEqual(3);
    stream.removeAllListeners('readable');
    // The rest arrives once read, and the connection answers the next statement.
    const chunks = await readAll(stream);
    expect(chunks.reduce((sum, c) => sum + c.records, 0)).toBe(50_000);
    expect(await text('SELECT 1')).toEqual([['1']]);
  });

  it('passes a record longer than a chunk whole, in a chunk of its own', async () => {
    const chunks = await readAll(
      recordStream(connection, 'SELECT line FROM record_lines WHERE id IN (0, 1) ORDER BY id', []),
    );
    expect(chunks.map((c) => c.records)).toEqual([1, 1]);
    expect(chunks[0]?.bytes.length).toBe(RECORDS_CHUNK_BYTES + 1001);
    expect(chunks[0]?.longest).toBe(RECORDS_CHUNK_BYTES + 1001);
  });

  it('fails on a NULL record, and leaves the connection free for the next statement', async () => {
    await expect(
      readAll(recordStream(connection, 'SELECT line FROM record_lines WHERE id < 100 ORDER BY id', [])),
    ).rejects.toThrow(/record is NULL/);
    expect(await text('SELECT COUNT(*) FROM record_lines')).toEqual([['50002']]);
  });
});
