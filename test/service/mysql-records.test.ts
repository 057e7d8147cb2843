import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type * as mysql from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlConnection, mysqlQuery } from '../../src/service/connectors/mysql.js';
import { RECORDS_CHUNK_BYTES, recordStream } from '../../src/service/syncs/mysql-records.js';
import type { RecordChunk } from '../../src/service/syncs/segments.js';
import { packet, startFakeMysql, type FakeMysql } from '../helpers/fake-mysql.js';
import { readerSettings, useTestMysqlDatabase } from '../helpers/mysql.js';

/**
 * A SELECT's rows read from the connection's bytes by lake (recordStream), each a CSV record: plain columns as the
 * server sends them, text quoted with its quotes doubled, NULL empty; taken in chunks of whole records.
 */
describe('records read from a MySQL connection', () => {
  const db = useTestMysqlDatabase();
  let connection: mysql.Connection;
  beforeAll(async () => {
    await db.query(
      `CREATE TABLE record_lines (id int PRIMARY KEY, line mediumtext NULL) CHARACTER SET utf8mb4;
       INSERT INTO record_lines SELECT seq, CONCAT('"row ', seq, '",', REPEAT('x', seq % 200)) FROM seq_1_to_50000;
       INSERT INTO record_lines VALUES (0, REPEAT('y', ${RECORDS_CHUNK_BYTES + 1000})), (-1, NULL), (-2, ''),
         (-3, 'ünïcödé 😀, "quoted"\nnext line'), (-4, REPEAT('"', 300));`,
    );
    connection = mysqlConnection(readerSettings(db));
  });
  afterAll(() => {
    connection?.destroy();
  });

  const text = async (sql: string): Promise<(string | null)[][]> =>
    (await mysqlQuery(connection, sql)).map((row) => row.map((v) => (v === null ? null : String(v))));
  const readAll = async (stream: Readable): Promise<RecordChunk[]> => {
    const chunks: RecordChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk as RecordChunk);
    return chunks;
  };
  /** The record RFC 4180 makes of a row of (id, line). */
  const csv = ([id, line]: (string | null)[]): string =>
    `${id},${line === null ? '' : `"${(line as string).replace(/"/g, '""')}"`}\n`;

  it('passes every record once, in order, in chunks of whole records no larger than a chunk', async () => {
    const chunks = await readAll(
      recordStream(connection, 'SELECT id, line FROM record_lines WHERE id > 0 ORDER BY id', [], [false, true]),
    );
    const expected = (await text('SELECT id, line FROM record_lines WHERE id > 0 ORDER BY id')).map(csv);
    expect(Buffer.concat(chunks.map((c) => c.bytes)).toString()).toBe(expected.join(''));
    expect(chunks.reduce((sum, c) => sum + c.records, 0)).toBe(50_000);
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) {
      expect(chunk.bytes.length).toBeLessThanOrEqual(RECORDS_CHUNK_BYTES);
      expect(chunk.bytes.at(-1)).toBe(0x0a);
      const lengths = expected.slice(0, chunk.records).map((line) => Buffer.byteLength(line));
      expected.splice(0, chunk.records);
      expect(lengths.reduce((a, b) => a + b, 0)).toBe(chunk.bytes.length);
      expect(chunk.longest).toBe(Math.max(...lengths));
    }
  });

  it('quotes text exactly: NULL empty, an empty text two quotes, quotes doubled, UTF-8 and line ends kept', async () => {
    const chunks = await readAll(
      recordStream(connection, 'SELECT id, line FROM record_lines WHERE id < 0 ORDER BY id DESC', [], [false, true]),
    );
    expect(Buffer.concat(chunks.map((c) => c.bytes)).toString()).toBe(
      `-1,\n-2,""\n-3,"ünïcödé 😀, ""quoted""\nnext line"\n-4,"${'"'.repeat(600)}"\n`,
    );
  });

  it('holds no more than a few chunks while nobody reads them: the connection waits', async () => {
    const stream = recordStream(
      connection,
      'SELECT id, line FROM record_lines WHERE id > 0 ORDER BY id',
      [],
      [false, true],
    );
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
      recordStream(connection, 'SELECT line FROM record_lines WHERE id IN (0, 1) ORDER BY id', [], [true]),
    );
    expect(chunks.map((c) => c.records)).toEqual([1, 1]);
    expect(chunks[0]?.bytes.length).toBe(RECORDS_CHUNK_BYTES + 1003);
    expect(chunks[0]?.longest).toBe(RECORDS_CHUNK_BYTES + 1003);
    expect(chunks[0]?.bytes.toString()).toBe(`"${'y'.repeat(RECORDS_CHUNK_BYTES + 1000)}"\n`);
    // One of quotes, each doubled: its chunk is sized by the quotes it holds, and holds them all.
    const quotes = RECORDS_CHUNK_BYTES + 7;
    const doubled = await readAll(recordStream(connection, `SELECT 1, REPEAT('"', ${quotes})`, [], [false, true]));
    expect(doubled.map((c) => c.records)).toEqual([1]);
    expect(doubled[0]?.bytes.toString()).toBe(`1,"${'"'.repeat(2 * quotes)}"\n`);
  });

  it("fails with the server's error, before or among the rows, and leaves the connection free", async () => {
    await expect(readAll(recordStream(connection, 'SELECT id FROM no_such_table', [], [false]))).rejects.toThrow(
      /no_such_table/,
    );
    expect(await text('SELECT 3')).toEqual([['3']]);
    // An error after rows were sent: a value that does not fit, found as the rows are made.
    await expect(
      readAll(
        recordStream(
          connection,
          'SELECT id, IF(id = 40000, (SELECT 1 UNION SELECT 2), 0) FROM record_lines WHERE id > 0 ORDER BY id',
          [],
          [false, true],
        ),
      ),
    ).rejects.toThrow();
    expect(await text('SELECT 4')).toEqual([['4']]);
  });

  it('refuses an answer with another number of columns than asked, and ends that connection', async () => {
    const other = mysqlConnection(readerSettings(db));
    try {
      await expect(readAll(recordStream(other, 'SELECT 1, 2', [], [false]))).rejects.toThrow(
        /answered with 2 columns where 1 were asked/,
      );
    } finally {
      other.destroy();
    }
  });

  it('reads and drops what is left when the reader stops early, so the next statement is answered', async () => {
    const stream = recordStream(
      connection,
      'SELECT id, line FROM record_lines WHERE id > 0 ORDER BY id',
      [],
      [false, true],
    );
    for await (const chunk of stream) {
      expect((chunk as RecordChunk).records).toBeGreaterThan(0);
      break;
    }
    expect(await text('SELECT COUNT(*) FROM record_lines')).toEqual([['50005']]);
  });

  it('binds its values as the driver does', async () => {
    const chunks = await readAll(
      recordStream(
        connection,
        'SELECT id, line FROM record_lines WHERE id = ? OR line = ?',
        [-2, 'nothing'],
        [false, true],
      ),
    );
    expect(Buffer.concat(chunks.map((c) => c.bytes)).toString()).toBe('-2,""\n');
  });
});

/** A length-encoded string of any length, or the NULL mark. */
function value(text: string | null): Buffer {
  if (text === null) return Buffer.from([0xfb]);
  const bytes = Buffer.from(text);
  if (bytes.length < 251) return Buffer.concat([Buffer.from([bytes.length]), bytes]);
  const length = Buffer.alloc(9);
  length[0] = 0xfe;
  length.writeUIntLE(bytes.length, 1, 6);
  return Buffer.concat([length, bytes]);
}

/** A result set of text rows as a server sends it, a payload of 16 MiB or more in continued packets. */
function resultSet(columns: number, rows: Buffer[]): Buffer {
  let seq = 1;
  const packets: Buffer[] = [];
  const send = (payload: Buffer): void => {
    let at = 0;
    for (;;) {
      const part = payload.subarray(at, at + 0xffffff);
      packets.push(packet(seq++ % 256, part));
      at += part.length;
      if (part.length < 0xffffff) return;
    }
  };
  const eof = Buffer.from([0xfe, 0, 0, 0x02, 0]);
  send(Buffer.from([columns]));
  for (let i = 0; i < columns; i++) send(Buffer.from([3, 0x64, 0x65, 0x66, 0, 0, 0, 1, 0x63, 1, 0x63]));
  send(eof);
  for (const row of rows) send(row);
  send(eof);
  return Buffer.concat(packets);
}

/**
 * What lake's reader makes of answers only a server of the test's own sends: rows in continued packets, answers cut
 * into pieces of a few bytes, rows that do not follow the protocol, a request for a local file.
 */
describe('records read from answers framed every way the protocol allows, and some it does not', () => {
  let server: FakeMysql;
  beforeAll(async () => {
    server = await startFakeMysql((socket: Socket, chunk: Buffer) => {
      if (chunk[4] !== 0x03) return;
      const query = chunk.subarray(5).toString();
      if (query.includes('huge'))
        socket.write(resultSet(2, [Buffer.concat([value('1'), value('h'.repeat((16 << 20) + 10))])]));
      else if (query.includes('dribble')) {
        const answer = resultSet(2, [
          Buffer.concat([value('1'), value('a "b"')]),
          Buffer.concat([value('2'), value(null)]),
          Buffer.concat([value('3'), value('x'.repeat(300))]),
        ]);
        // Three bytes at a time, each its own write: every packet and header is cut somewhere.
        for (let at = 0; at < answer.length; at += 3) socket.write(answer.subarray(at, at + 3));
      } else if (query.includes('pieces')) {
        const answer = resultSet(
          2,
          Array.from({ length: 2_000 }, (_, i) =>
            Buffer.concat([value(String(i)), value(`row ${i} ${'r'.repeat(i % 97)}`)]),
          ),
        );
        // Pieces of 1,000 bytes: each completes the row cut at the end of the one before, and holds whole rows after.
        for (let at = 0; at < answer.length; at += 1_000) socket.write(answer.subarray(at, at + 1_000));
      } else if (query.includes('malformed'))
        socket.write(resultSet(2, [Buffer.concat([value('1'), Buffer.from([200, 0x61])])]));
      else if (query.includes('infile')) socket.write(packet(1, Buffer.from('\xfb/etc/passwd', 'latin1')));
      else socket.write(resultSet(1, [value('1')]));
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const read = async (sql: string, quoted: boolean[]): Promise<{ text: string; chunks: RecordChunk[] }> => {
    const connection = mysqlConnection({
      config: { port: server.port, database: 'shop' },
      secrets: { host: '127.0.0.1', user: 'anyone' },
      tables: [],
    });
    try {
      const chunks: RecordChunk[] = [];
      for await (const chunk of recordStream(connection, sql, [], quoted)) chunks.push(chunk as RecordChunk);
      return { text: Buffer.concat(chunks.map((c) => c.bytes)).toString(), chunks };
    } finally {
      connection.destroy();
    }
  };

  it('reads a row sent in continued 16 MiB packets whole', async () => {
    const { text, chunks } = await read('select huge', [false, true]);
    expect(chunks.map((c) => c.records)).toEqual([1]);
    expect(text).toBe(`1,"${'h'.repeat((16 << 20) + 10)}"\n`);
  });

  it('reads an answer that arrives a few bytes at a time', async () => {
    const { text } = await read('select dribble', [false, true]);
    expect(text).toBe(`1,"a ""b"""\n2,\n3,"${'x'.repeat(300)}"\n`);
  });

  it('reads rows cut between pieces, with whole rows after the cut in the same piece', async () => {
    const { text, chunks } = await read('select pieces', [false, true]);
    const expected = Array.from({ length: 2_000 }, (_, i) => `${i},"row ${i} ${'r'.repeat(i % 97)}"\n`).join('');
    expect(text).toBe(expected);
    expect(chunks.reduce((n, c) => n + c.records, 0)).toBe(2_000);
  });

  it('fails on a row whose values do not fill its packet, and on a request for a local file', async () => {
    await expect(read('select malformed', [false, true])).rejects.toThrow(/malformed row/);
    await expect(read('select infile', [false])).rejects.toThrow(/local file/);
  });
});
