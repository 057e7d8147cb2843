import { readdirSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { StagingBudget } from './staging-budget.js';

/**
 * Bytes gathered before one write: the COPY stream arrives in pieces of about 8 KB (PostgreSQL's send buffer), and
 * a write each cost more CPU than the rest of staging (bench/sync-tables.mjs).
 */
const WRITE_BYTES = 1 << 20;

/** Records per staged segment: large enough for DuckDB's parallel reader, small enough to overlap the read. */
export const ROWS_PER_SEGMENT = 500_000;

/** A segment is also cut at this size, so wide rows make several files rather than one huge one. */
export const MAX_SEGMENT_BYTES = 256 << 20;

/**
 * Whole records whose bounds their producer knows (a driver hands over one row at a time): staged as they are,
 * without scanning every byte for the newlines and quotes that end them.
 */
export interface RecordChunk {
  bytes: Buffer;
  /** How many records the bytes hold, each ending with its newline. */
  records: number;
  /** The bytes of the longest of them, newline included. */
  longest: number;
}

/**
 * Stages a CSV stream as numbered segment files of about `recordsPerSegment` records each, cut only between
 * records (a newline outside quotes), and announces each finished segment, so a loader can convert it while the
 * next one is still arriving. Writes are awaited before more is taken, so memory stays bounded.
 */
export class SegmentedStaging extends Writable {
  private file: FileHandle | undefined;
  private path = '';
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private index = 0;
  private inSegment = 0;
  private quoted = false;
  private total = 0;
  /** Bytes seen before the current chunk, where the current record began, and the longest record of the segment. */
  private offset = 0;
  private recordStart = 0;
  private longest = 0;
  /** Where the current segment began in the stream, and the bytes of it written to disk so far. */
  private segmentStart = 0;
  private segmentBytes = 0;

  constructor(
    private readonly dir: string,
    private readonly base: string,
    private readonly recordsPerSegment: number,
    /**
     * Told of each finished segment and the bytes of its longest record (a reader must be told of records over its
     * default line size); staging goes on once what it returns settles (a loader's room, say).
     */
    private readonly onSegment: (path: string, longestRecord: number, bytes: number) => void | Promise<void>,
    private readonly onRecords: (total: number) => void,
    /**
     * The staging caps: bytes written count against `table`'s budget, no record may pass the longest allowed, and
     * a segment is also cut once it holds `maxSegmentBytes` (rows of a few MB would otherwise make one huge file).
     */
    private readonly bounds?: { budget: StagingBudget; table: string; maxSegmentBytes: number },
    /**
     * With `framed`, the stream is of RecordChunks (whole records), and a segment is cut between chunks once it
     * holds enough records; otherwise it is of bytes, scanned for where records end.
     */
    options: { framed?: boolean } = {},
  ) {
    super({ objectMode: options.framed === true });
  }

  override _write(chunk: Buffer | RecordChunk, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    void (Buffer.isBuffer(chunk) ? this.take(chunk) : this.takeRecords(chunk)).then(() => done(), done);
  }

  override _final(done: (error?: Error | null) => void): void {
    void this.finishSegment().then(() => done(), done);
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    const file = this.file;
    this.file = undefined;
    // Destroyed with its own error already: a failure to close the staging file adds nothing to it.
    void (file ? file.close().catch(() => {}) : Promise.resolve()).then(() => done(error));
  }

  private async take(chunk: Buffer): Promise<void> {
    let start = 0;
    // Most chunks hold no quote at all: then every newline ends a record, found with native indexOf.
    const plain = !this.quoted && chunk.indexOf(0x22) === -1;
    for (
      let i = plain ? chunk.indexOf(0x0a) : 0;
      i !== -1 && i < chunk.length;
      i = plain ? chunk.indexOf(0x0a, i + 1) : i + 1
    ) {
      const byte = chunk[i];
      if (byte === 0x22) this.quoted = !this.quoted;
      else if (byte === 0x0a && !this.quoted) {
        this.inSegment++;
        this.total++;
        const end = this.offset + i + 1;
        if (end - this.recordStart > this.longest) this.longest = end - this.recordStart;
        this.bounds?.budget.checkRecord(end - this.recordStart);
        this.recordStart = end;
        if (
          this.inSegment >= this.recordsPerSegment ||
          end - this.segmentStart >= (this.bounds?.maxSegmentBytes ?? Number.POSITIVE_INFINITY)
        ) {
          this.put(chunk.subarray(start, i + 1));
          start = i + 1;
          this.segmentStart = end;
          await this.finishSegment();
        }
      }
    }
    if (start < chunk.length) this.put(chunk.subarray(start));
    this.offset += chunk.length;
    // A record still open (no newline yet) is checked as it grows: a source that never ends one fills nothing.
    this.bounds?.budget.checkRecord(this.offset - this.recordStart);
    if (this.pendingBytes >= WRITE_BYTES) await this.flush();
    this.onRecords(this.total);
  }

  private async takeRecords(chunk: RecordChunk): Promise<void> {
    if (this.offset !== this.recordStart)
      throw new Error('Framed records were staged after bytes that did not end a record.');
    this.bounds?.budget.checkRecord(chunk.longest);
    if (chunk.longest > this.longest) this.longest = chunk.longest;
    this.put(chunk.bytes);
    this.inSegment += chunk.records;
    this.total += chunk.records;
    this.offset += chunk.bytes.length;
    this.recordStart = this.offset;
    if (
      this.inSegment >= this.recordsPerSegment ||
      this.offset - this.segmentStart >= (this.bounds?.maxSegmentBytes ?? Number.POSITIVE_INFINITY)
    ) {
      this.segmentStart = this.offset;
      await this.finishSegment();
    } else if (this.pendingBytes >= WRITE_BYTES) await this.flush();
    this.onRecords(this.total);
  }

  private put(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
  }

  private async flush(): Promise<void> {
    if (this.pendingBytes === 0) return;
    if (!this.file) {
      this.path = join(this.dir, `${this.base}.${this.index}.csv`);
      this.file = await open(this.path, 'w', 0o600);
    }
    const buffers = this.pending;
    this.bounds?.budget.reserve(this.bounds.table, this.pendingBytes);
    this.segmentBytes += this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    await writeAll(this.file, buffers);
  }

  private async finishSegment(): Promise<void> {
    await this.flush();
    const file = this.file;
    if (!file) return;
    this.file = undefined;
    this.inSegment = 0;
    this.index++;
    // A last record without its newline (never so in COPY's output) still counts.
    const longest = Math.max(this.longest, this.offset - this.recordStart);
    const bytes = this.segmentBytes;
    this.longest = 0;
    this.segmentBytes = 0;
    await file.close();
    await this.onSegment(this.path, longest, bytes);
  }
}

/**
 * Writes every byte of `buffers`: a write may take fewer than it was given (a disk that fills part-way through it
 * answers with what fitted, and only the next write with ENOSPC), and the rest must not be dropped.
 */
export async function writeAll(file: FileHandle, buffers: Buffer[]): Promise<void> {
  let rest = buffers;
  while (rest.length > 0) {
    let { bytesWritten } = await file.writev(rest);
    if (bytesWritten === 0) throw new Error('the staging folder took no more bytes (is its disk full?)');
    while (rest.length > 0 && bytesWritten >= (rest[0] as Buffer).length) {
      bytesWritten -= (rest[0] as Buffer).length;
      rest = rest.slice(1);
    }
    if (bytesWritten > 0) rest = [(rest[0] as Buffer).subarray(bytesWritten), ...rest.slice(1)];
  }
}

/**
 * Removes what a table that failed left in the sync's staging folder (files named `<base>.…`: segments never loaded,
 * a segment cut short, its keys), so the sync's other tables have that disk back at once rather than when the sync
 * ends: what filled a disk is not left to fail the next table too.
 */
export function removeStaged(dir: string, base: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith(`${base}.`)) rmSync(join(dir, name), { force: true });
}
