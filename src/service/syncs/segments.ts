import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';

/**
 * Stages a CSV stream as numbered segment files of about `recordsPerSegment` records each, cut only between
 * records (a newline outside quotes), and announces each finished segment, so a loader can convert it while the
 * next one is still arriving. Writes respect backpressure, so memory stays bounded.
 */
export class SegmentedStaging extends Writable {
  private current: WriteStream | undefined;
  private index = 0;
  private inSegment = 0;
  private quoted = false;
  private total = 0;
  readonly segments: string[] = [];

  constructor(
    private readonly dir: string,
    private readonly base: string,
    private readonly recordsPerSegment: number,
    private readonly onSegment: (path: string) => void,
    private readonly onRecords: (total: number) => void,
  ) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    void this.take(chunk).then(() => done(), done);
  }

  override _final(done: (error?: Error | null) => void): void {
    void this.finishSegment().then(() => done(), done);
  }

  private async take(chunk: Buffer): Promise<void> {
    let start = 0;
    // Most chunks hold no quote at all: then every newline ends a record, found with native indexOf.
    const plain = !this.quoted && chunk.indexOf(0x22) === -1;
    for (let i = plain ? chunk.indexOf(0x0a) : 0; i !== -1 && i < chunk.length; i = plain ? chunk.indexOf(0x0a, i + 1) : i + 1) {
      const byte = chunk[i];
      if (byte === 0x22) this.quoted = !this.quoted;
      else if (byte === 0x0a && !this.quoted) {
        this.inSegment++;
        this.total++;
        if (this.inSegment >= this.recordsPerSegment) {
          await this.put(chunk.subarray(start, i + 1));
          start = i + 1;
          await this.finishSegment();
        }
      }
    }
    if (start < chunk.length) await this.put(chunk.subarray(start));
    this.onRecords(this.total);
  }

  private async put(bytes: Buffer): Promise<void> {
    if (bytes.length === 0) return;
    if (!this.current) {
      const path = join(this.dir, `${this.base}.${this.index}.csv`);
      this.current = createWriteStream(path, { mode: 0o600 });
      this.segments.push(path);
    }
    if (!this.current.write(bytes)) await new Promise<void>((resolve) => this.current?.once('drain', resolve));
  }

  private async finishSegment(): Promise<void> {
    const stream = this.current;
    if (!stream) return;
    this.current = undefined;
    this.inSegment = 0;
    this.index++;
    await new Promise<void>((resolve, reject) => stream.end((error?: Error | null) => (error ? reject(error) : resolve())));
    this.onSegment(stream.path as string);
  }
}
