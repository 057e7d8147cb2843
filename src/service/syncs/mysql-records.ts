import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { Readable } from 'node:stream';
import type * as mysql from 'mysql2';
import type { RecordChunk } from './segments.js';

/** Bytes of records passed on at once: one chunk per row would cost more than the rows. */
export const RECORDS_CHUNK_BYTES = 256 << 10;

/** A MySQL packet of this payload length is continued in the next (the protocol's 16 MiB parts). */
const CONTINUED = 0xffffff;
const COM_QUERY = 0x03;
const ERR = 0xff;
const OK = 0x00;
const EOF = 0xfe;
const NULL_VALUE = 0xfb;
const LOCAL_INFILE = 0xfb;
const QUOTE = 0x22;
const COMMA = 0x2c;
const NEWLINE = 0x0a;

/** The parts of mysql2's connection this reader takes over for a statement's rows (not in its typings). */
interface DriverInternals {
  stream: Duplex;
  packetParser: { execute(chunk: Buffer): void };
  sequenceId: number;
  clientEncoding: string;
  addCommand(command: unknown): void;
  format(sql: string, values: unknown[]): string;
  write(buffer: Buffer): void;
}

/** mysql2's packet as a command's step is handed it. */
interface DriverPacket {
  isError(): boolean;
  asError(encoding: string): Error;
}

/**
 * recordStream's rows, and what a reader that gives up part-way needs to free the connection: when the statement
 * ended at the server (its last packet read, or the connection lost), and the bytes read and dropped since the reader
 * let go.
 */
export interface RecordStream extends Readable {
  readonly ended: Promise<void>;
  discarded(): number;
}

/**
 * A SELECT's rows as CSV records (RFC 4180, NULL left empty), streamed as RecordChunks: each row is one record, so
 * staging need not scan the bytes for where records end. `quoted` says per column whether its text is quoted (text,
 * with its quotes doubled, so an empty string stays apart from NULL) or goes as it is (numbers, dates: digits,
 * signs, points, dashes and colons).
 *
 * The rows are read from the connection's bytes by lake, not by mysql2: the statement goes as a command of the
 * driver's queue, and while its answer arrives the driver's packet reader is set aside for one that frames each row
 * packet and copies its length-prefixed values straight into the chunk being filled. The server sends the columns
 * as they are instead of building each row's record with CONCAT and REPLACE (a third of its work per row), and no
 * JavaScript object, array or event is made per row (mysql2's row parsing and its events were most of a full sync's
 * main thread). The answer's last packet (its end, or an error) goes back through the driver's reader, so the driver
 * ends the command as its own and the connection serves the next statement. Backpressure pauses the socket.
 */
export function recordStream(
  connection: mysql.Connection,
  sql: string,
  values: unknown[],
  quoted: readonly boolean[],
): RecordStream {
  const driver = connection as unknown as DriverInternals;
  let paused = false;
  let isEnded = false;
  let resolveEnded!: () => void;
  const ended = new Promise<void>((resolve) => (resolveEnded = resolve));
  const markEnded = (): void => {
    isEnded = true;
    resolveEnded();
  };
  let discarded = 0;
  const countDiscarded = (chunk: Buffer): void => void (discarded += chunk.length);
  const stream = new Readable({
    objectMode: true,
    highWaterMark: 2,
    read() {
      if (!paused) return;
      paused = false;
      driver.stream.resume();
    },
  });
  const records = new RecordChunks(quoted, (chunk) => {
    if (!stream.push(chunk) && !paused) {
      paused = true;
      driver.stream.pause();
    }
  });
  const onError = (error: Error): void => {
    markEnded();
    stream.destroy(error);
  };
  const finish = (error?: Error): void => {
    markEnded();
    connection.removeListener('error', onError);
    if (error) {
      stream.destroy(error);
      return;
    }
    records.flush();
    stream.push(null);
  };
  // A connection lost under the rows (closed by a wire bound, a timeout, the server) is told to the connection.
  connection.on('error', onError);
  const command = new RowsCommand(() => {
    const query = Buffer.from(` ${driver.format(sql, values)}`, 'utf8');
    query[0] = COM_QUERY;
    new RowPackets(driver, records, (error) => {
      driver.stream.destroy();
      finish(error);
    }).takeOver();
    driver.sequenceId = 0;
    driver.write(packetOf(query, 0));
    driver.sequenceId = 1;
  }, finish);
  driver.addCommand(command);
  stream._destroy = (error, done) => {
    // Whatever rows are still to come are read and dropped, so the connection is free for the next statement.
    connection.removeListener('error', onError);
    records.discard();
    command.onEnd = () => markEnded();
    if (!isEnded) {
      const socket = driver.stream;
      socket.on('data', countDiscarded);
      // Lost meanwhile, the connection ends the statement too.
      socket.once('close', markEnded);
      void ended.then(() => {
        socket.off('data', countDiscarded);
        socket.off('close', markEnded);
      });
    }
    if (paused) driver.stream.resume();
    done(error);
  };
  return Object.assign(stream, { ended, discarded: () => discarded });
}

/** A MySQL packet: its payload's length in three bytes, its sequence number, the payload. */
function packetOf(payload: Buffer, sequence: number): Buffer {
  const header = Buffer.from([payload.length & 0xff, (payload.length >> 8) & 0xff, payload.length >> 16, sequence]);
  return Buffer.concat([header, payload]);
}

/**
 * The statement as a command of mysql2's queue: started when the connection is free (it writes the query and sets
 * the row reader in place), ended by the answer's last packet, which the row reader hands back to the driver.
 */
class RowsCommand extends EventEmitter {
  private started = false;

  constructor(
    private readonly start: () => void,
    public onEnd: (error?: Error) => void,
  ) {
    super();
  }

  /** mysql2's step: called with no packet when the command's turn comes, then with each packet the driver reads. */
  execute(packet: DriverPacket | undefined, connection: DriverInternals): boolean {
    if (!this.started) {
      this.started = true;
      this.start();
      return false;
    }
    const error = packet?.isError() ? packet.asError(connection.clientEncoding) : undefined;
    this.onEnd(error);
    this.emit('end');
    return true;
  }

  /** mysql2 calls this with a fatal error of the connection (lost, destroyed) while the command is current. */
  onResult(error: Error): void {
    this.onEnd(error);
  }
}

/**
 * Frames what the server answers a SELECT with, packet by packet: the column count, the column definitions (passed
 * over) and their end, then a packet per row, each a CSV record. The answer's last packet (EOF, or an error) and
 * whatever follows it go back to the driver's own reader. Set in place of that reader while the answer arrives.
 */
class RowPackets {
  private readonly driverReader: { execute(chunk: Buffer): void };
  private phase: 'count' | 'columns' | 'columns end' | 'rows' = 'count';
  private columnsLeft = 0;
  /** A packet cut between chunks: its bytes so far, and how many it has in all once its header is known. */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private partialNeeds = 0;
  /** A payload continued over 16 MiB packets, gathered whole. */
  private continued: Buffer[] = [];

  constructor(
    private readonly driver: DriverInternals,
    private readonly records: RecordChunks,
    private readonly fail: (error: Error) => void,
  ) {
    this.driverReader = driver.packetParser;
  }

  /** From now on the connection's bytes come here (the statement was just written: nothing of its answer is read). */
  takeOver(): void {
    this.driver.packetParser = this;
  }

  execute(chunk: Buffer): void {
    if (this.partialBytes === 0) {
      this.packets(chunk, 0, chunk.length, undefined);
      return;
    }
    const gathered = this.gather(chunk);
    if (gathered !== undefined)
      this.packets(gathered.packet, 0, gathered.packet.length, chunk.subarray(gathered.taken));
  }

  /**
   * The cut packet, completed from the start of `chunk` when it can be, and how many of the chunk's bytes that took.
   * Only the packet's own bytes are copied, not the chunk's rest (a row cut at the end of nearly every chunk would
   * copy the whole answer once more); until the packet is whole its pieces are kept, joined once at the end (a row
   * of many megabytes arrives in many chunks).
   */
  private gather(chunk: Buffer): { packet: Buffer; taken: number } | undefined {
    let taken = 0;
    if (this.partialNeeds === 0) {
      // Its 4-byte header is cut too: completed first, for the packet's length.
      taken = Math.min(4 - this.partialBytes, chunk.length);
      this.keep(chunk.subarray(0, taken));
      if (this.partialBytes < 4) return undefined;
      const head = Buffer.concat(this.partial, this.partialBytes);
      this.partial = [head];
      this.partialNeeds = 4 + payloadLength(head, 0);
    }
    const wanted = Math.min(this.partialNeeds - this.partialBytes, chunk.length - taken);
    this.keep(chunk.subarray(taken, taken + wanted));
    taken += wanted;
    if (this.partialBytes < this.partialNeeds) return undefined;
    const packet =
      this.partial.length > 1 ? Buffer.concat(this.partial, this.partialBytes) : (this.partial[0] as Buffer);
    this.partial = [];
    this.partialBytes = 0;
    this.partialNeeds = 0;
    return { packet, taken };
  }

  private keep(piece: Buffer): void {
    if (piece.length === 0) return;
    this.partial.push(piece);
    this.partialBytes += piece.length;
  }

  /**
   * Each whole packet of data[at, end); a packet cut at the end is kept for the next chunk. False once the answer
   * ended (the rest went to the driver) or failed.
   */
  private packets(data: Buffer, start: number, end: number, after: Buffer | undefined): boolean {
    let at = start;
    while (end - at >= 4) {
      const length = payloadLength(data, at);
      if (end - at - 4 < length) break;
      const payload = at + 4;
      if (length === CONTINUED) {
        this.continued.push(data.subarray(payload, payload + length));
        at = payload + length;
        continue;
      }
      let verdict: 'more' | 'last' | Error;
      if (this.continued.length > 0) {
        const whole = Buffer.concat([...this.continued, data.subarray(payload, payload + length)]);
        this.continued = [];
        verdict = this.packet(whole, 0, whole.length);
        if (verdict === 'last') verdict = new Error('the source ended its answer with a packet longer than 16 MiB');
      } else verdict = this.packet(data, payload, payload + length);
      if (verdict === 'last') {
        this.handBack(data.subarray(at), after);
        return false;
      }
      if (verdict instanceof Error) {
        this.driver.packetParser = this.driverReader;
        this.fail(verdict);
        return false;
      }
      at = payload + length;
    }
    if (at < end) {
      this.partial = [data.subarray(at, end)];
      this.partialBytes = end - at;
      this.partialNeeds = end - at >= 4 ? 4 + payloadLength(data, at) : 0;
    }
    if (after !== undefined && after.length > 0) return this.packets(after, 0, after.length, undefined);
    return true;
  }

  /** The answer's last packet onward go to the driver's reader, which ends the command. */
  private handBack(last: Buffer, after: Buffer | undefined): void {
    this.driver.packetParser = this.driverReader;
    // The driver checks each packet's sequence number against the one it expects next.
    this.driver.sequenceId = last[3] as number;
    this.driverReader.execute(after !== undefined && after.length > 0 ? Buffer.concat([last, after]) : last);
  }

  /** One packet's payload, data[at, end): whether more of the answer follows, it was the last, or it is malformed. */
  private packet(data: Buffer, at: number, end: number): 'more' | 'last' | Error {
    const first = data[at];
    switch (this.phase) {
      case 'rows':
        if (first === ERR || (first === EOF && end - at < 9)) return 'last';
        return this.records.row(data, at, end) ? 'more' : new Error('the source sent a malformed row');
      case 'count': {
        if (first === ERR || first === OK) return 'last';
        if (first === LOCAL_INFILE) return new Error('the source asked for a local file, which lake never sends');
        const count = first !== undefined && first < 0xfb && end - at === 1 ? first : readCount(data, at, end);
        if (count !== this.records.columns)
          return new Error(`the source answered with ${count} columns where ${this.records.columns} were asked`);
        this.columnsLeft = count;
        this.phase = 'columns';
        return 'more';
      }
      case 'columns':
        if (first === ERR) return 'last';
        if (--this.columnsLeft === 0) this.phase = 'columns end';
        return 'more';
      case 'columns end':
        if (first === ERR) return 'last';
        if (first !== EOF || end - at >= 9) return new Error('the source sent no end to its column definitions');
        this.phase = 'rows';
        return 'more';
    }
  }
}

/** How many quote bytes data[start, end) holds: each a quoted text doubles is one of them. */
function quotesIn(data: Buffer, start: number, end: number): number {
  let count = 0;
  for (let at = data.indexOf(QUOTE, start); at !== -1 && at < end; at = data.indexOf(QUOTE, at + 1)) count++;
  return count;
}

function payloadLength(data: Buffer, at: number): number {
  return (data[at] as number) | ((data[at + 1] as number) << 8) | ((data[at + 2] as number) << 16);
}

/** A length-encoded integer filling data[at, end) (a result set's column count); -1 when it is not one. */
function readCount(data: Buffer, at: number, end: number): number {
  const first = data[at];
  if (first === 0xfc && end - at === 3) return data.readUInt16LE(at + 1);
  if (first === 0xfd && end - at === 4) return data.readUIntLE(at + 1, 3);
  return -1;
}

/** CSV records built from row packets into chunks of whole records, passed on as each fills. */
class RecordChunks {
  readonly columns: number;
  private chunk = Buffer.allocUnsafe(RECORDS_CHUNK_BYTES);
  private used = 0;
  private records = 0;
  private longest = 0;
  private discarding = false;

  constructor(
    private readonly quoted: readonly boolean[],
    private readonly pass: (chunk: RecordChunk) => void,
  ) {
    this.columns = quoted.length;
  }

  /** Rows still to come are read and dropped (the reader let go of the stream). */
  discard(): void {
    this.discarding = true;
  }

  flush(): void {
    if (this.used === 0 || this.discarding) return;
    this.pass({ bytes: this.chunk.subarray(0, this.used), records: this.records, longest: this.longest });
    this.chunk = Buffer.allocUnsafe(RECORDS_CHUNK_BYTES);
    this.used = 0;
    this.records = 0;
    this.longest = 0;
  }

  /**
   * A row packet's values, data[at, end), each a length-prefixed text or the NULL mark, as one record: false when
   * the values do not fill the packet exactly (a server that is not speaking the protocol).
   */
  row(data: Buffer, start: number, end: number): boolean {
    if (this.discarding) return true;
    // At most every byte doubled (a text of quotes), two quotes, a separator per value and the line's end.
    const bound = 2 * (end - start) + 3 * this.columns + 1;
    if (this.used + bound > this.chunk.length) {
      this.flush();
      // A record longer than a chunk travels in a chunk of its own, sized by the quotes it holds (a row of tens of
      // megabytes would otherwise take twice its size); staging bounds how long one may be.
      if (bound > this.chunk.length)
        this.chunk = Buffer.allocUnsafe(end - start + quotesIn(data, start, end) + 3 * this.columns + 1);
    }
    const out = this.chunk;
    const begin = this.used;
    let used = begin;
    let at = start;
    for (let column = 0; column < this.columns; column++) {
      if (column > 0) out[used++] = COMMA;
      if (at >= end) return false;
      const mark = data[at] as number;
      let length: number;
      if (mark < 0xfb) {
        length = mark;
        at += 1;
      } else if (mark === NULL_VALUE) {
        at += 1;
        continue;
      } else if (mark === 0xfc) {
        length = (data[at + 1] as number) | ((data[at + 2] as number) << 8);
        at += 3;
      } else if (mark === 0xfd) {
        length = (data[at + 1] as number) | ((data[at + 2] as number) << 8) | ((data[at + 3] as number) << 16);
        at += 4;
      } else if (mark === 0xfe && at + 9 <= end && data.readUInt16LE(at + 7) === 0) {
        length = data.readUIntLE(at + 1, 6);
        at += 9;
      } else return false;
      const stop = at + length;
      if (stop > end) return false;
      if (this.quoted[column]) {
        out[used++] = QUOTE;
        if (length > 64 && data.subarray(at, stop).indexOf(QUOTE) === -1) {
          data.copy(out, used, at, stop);
          used += length;
        } else {
          for (let i = at; i < stop; i++) {
            const byte = data[i] as number;
            if (byte === QUOTE) out[used++] = QUOTE;
            out[used++] = byte;
          }
        }
        out[used++] = QUOTE;
      } else if (length > 64) {
        data.copy(out, used, at, stop);
        used += length;
      } else {
        for (let i = at; i < stop; i++) out[used++] = data[i] as number;
      }
      at = stop;
    }
    if (at !== end) return false;
    out[used++] = NEWLINE;
    const size = used - begin;
    this.used = used;
    this.records++;
    if (size > this.longest) this.longest = size;
    // A chunk made for one long record goes on alone, as a full one does.
    if (this.chunk.length > RECORDS_CHUNK_BYTES || this.used >= this.chunk.length) this.flush();
    return true;
  }
}
