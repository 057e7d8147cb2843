import { Readable } from 'node:stream';
import type * as mysql from 'mysql2';
import type { RecordChunk } from './segments.js';

/** Bytes of records passed on at once: one chunk per row would cost more than the rows. */
export const RECORDS_CHUNK_BYTES = 256 << 10;

/**
 * Rows of one query whose single column is a CSV record the server made (csvRecordSql), streamed as RecordChunks:
 * each row is one record, so staging need not scan the bytes for where records end.
 *
 * The rows are taken from the driver's row events and copied straight into the chunk being filled, not passed one
 * by one through streams: for 2,000,000 rows a Readable in object mode piped into a Transform, and gathering each
 * chunk with Buffer.concat, were most of a full sync's main thread (which is what a sync's speed waits on: the
 * server builds records faster than one JavaScript thread took them). Backpressure is the driver's own: the
 * connection is paused while the chunks wait to be staged, and resumed when more are wanted.
 */
export function recordStream(connection: mysql.Connection, sql: string, values: unknown[]): Readable {
  const query = connection.query({ sql, values });
  let chunk = Buffer.allocUnsafe(RECORDS_CHUNK_BYTES);
  let used = 0;
  let records = 0;
  let longest = 0;
  let paused = false;
  const stream = new Readable({
    objectMode: true,
    highWaterMark: 2,
    read() {
      if (!paused) return;
      paused = false;
      connection.resume();
    },
  });
  const pass = (): void => {
    const framed: RecordChunk = { bytes: chunk.subarray(0, used), records, longest };
    chunk = Buffer.allocUnsafe(RECORDS_CHUNK_BYTES);
    used = 0;
    records = 0;
    longest = 0;
    if (!stream.push(framed)) {
      paused = true;
      connection.pause();
    }
  };
  const onResult = (row: (Buffer | string | null)[]): void => {
    const record = row[0];
    if (record === null || record === undefined) {
      stream.destroy(new Error('the source sent a row whose record is NULL (a NOT NULL column gave NULL)'));
      return;
    }
    const bytes = typeof record === 'string' ? Buffer.from(record) : record;
    const size = bytes.length + 1;
    if (used + size > chunk.length) {
      if (used > 0) pass();
      // A record longer than a chunk travels in a chunk of its own size (staging bounds how long one may be).
      if (size > chunk.length) chunk = Buffer.allocUnsafe(size);
    }
    bytes.copy(chunk, used);
    chunk[used + bytes.length] = 0x0a;
    used += size;
    records++;
    if (size > longest) longest = size;
  };
  const onEnd = (): void => {
    connection.removeListener('error', onError);
    if (used > 0) pass();
    stream.push(null);
  };
  const onError = (error: Error): void => void stream.destroy(error);
  query.on('result', onResult);
  query.on('end', onEnd);
  query.on('error', onError);
  // A connection lost under the rows (closed by a wire bound, a timeout, the server) is told to the connection
  // alone: mysql2 gives a fatal error to the statement only when it has a callback, which a streamed one has not,
  // and the rows would wait for ever.
  connection.on('error', onError);
  stream._destroy = (error, done) => {
    // Whatever rows are still to come are read and dropped, so the connection is free for the next statement.
    query.removeListener('result', onResult);
    query.removeListener('end', onEnd);
    query.removeListener('error', onError);
    connection.removeListener('error', onError);
    query.on('error', () => undefined);
    if (paused) connection.resume();
    done(error);
  };
  return stream;
}
