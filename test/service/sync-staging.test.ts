import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { openPrivilegedConnection } from '../../src/service/engine/duckdb.js';
import { LoadQueue } from '../../src/service/syncs/load-queue.js';
import { SegmentedStaging, writeAll, type RecordChunk } from '../../src/service/syncs/segments.js';
import { StagingBudget, StagingLimitError } from '../../src/service/syncs/staging-budget.js';
import { tempDir } from '../helpers/temp.js';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('staging a COPY stream in segments', () => {
  it("cuts only between records (never inside quotes), keeps every byte, and waits for the loader's room", async () => {
    const dir = tempDir('lake-staging');
    const records = ['1,a\n', '2,"x\ny"\n', '3,"q""\n"\n', '4,\n', '5,b\n'];
    const text = records.join('');
    // Pieces cut at awkward places: inside a quoted newline, between a quote and its double.
    const pieces = [text.slice(0, 5), text.slice(5, 9), text.slice(9, 17), text.slice(17)].map((p) => Buffer.from(p));
    const announced: string[] = [];
    let release: (() => void) | undefined;
    let counted = 0;
    const staging = new SegmentedStaging(
      dir,
      't',
      2,
      (path) => {
        announced.push(path);
        // The first segment's loader has no room yet: staging must wait for it.
        if (announced.length === 1) return new Promise<void>((resolve) => (release = resolve));
        return undefined;
      },
      (n) => (counted = n),
    );
    const done = pipeline(Readable.from(pieces), staging);
    const deadline = Date.now() + 10_000;
    while (!release && Date.now() < deadline) await sleep(5);
    expect(announced).toHaveLength(1);
    // Held: the rest (two tiny files) would be staged in well under this without the wait.
    const outcome = await Promise.race([done.then(() => 'finished'), sleep(300).then(() => 'held')]);
    expect(outcome).toBe('held');
    expect(announced).toHaveLength(1);
    release?.();
    await done;
    expect(announced.map((p) => p.split('/').at(-1))).toEqual(['t.0.csv', 't.1.csv', 't.2.csv']);
    expect(announced.map((p) => readFileSync(p, 'utf8'))).toEqual([
      records[0]! + records[1]!,
      records[2]! + records[3]!,
      records[4]!,
    ]);
    expect(counted).toBe(5);
    expect(readdirSync(dir).sort()).toEqual(['t.0.csv', 't.1.csv', 't.2.csv']);
  });
});

describe('staging records whose bounds the driver knows (framed)', () => {
  it('keeps every byte, cuts segments between chunks once they hold enough records, and bounds the longest record', async () => {
    const dir = tempDir('lake-staging-framed');
    const chunkOf = (records: string[]): RecordChunk => ({
      bytes: Buffer.from(records.join('')),
      records: records.length,
      longest: Math.max(...records.map((r) => Buffer.byteLength(r))),
    });
    // Quotes and quoted newlines inside records: framed, nothing is scanned for them.
    const chunks = [['1,"a\nb"\n', '2,"q""x"\n'], ['3,c\n'], ['4,"long value"\n', '5,e\n', '6,f\n']].map(chunkOf);
    const announced: { path: string; longest: number }[] = [];
    let counted = 0;
    const staging = new SegmentedStaging(
      dir,
      'f',
      3,
      (path, longest) => void announced.push({ path, longest }),
      (n) => (counted = n),
      undefined,
      { framed: true },
    );
    await pipeline(Readable.from(chunks), staging);
    // Cut once a segment held 3 records: after the second chunk, then at the end.
    expect(announced.map((a) => readFileSync(a.path, 'utf8'))).toEqual([
      '1,"a\nb"\n2,"q""x"\n3,c\n',
      '4,"long value"\n5,e\n6,f\n',
    ]);
    expect(announced.map((a) => a.longest)).toEqual([9, 15]);
    expect(counted).toBe(6);
    const budget = new StagingBudget({
      maxRecordBytes: 12,
      maxTableStagingBytes: 1 << 20,
      maxSyncStagingBytes: 1 << 20,
    });
    await expect(
      pipeline(
        Readable.from(chunks),
        new SegmentedStaging(
          dir,
          'g',
          3,
          () => {},
          () => {},
          { budget, table: 'g', maxSegmentBytes: 1 << 20 },
          {
            framed: true,
          },
        ),
      ),
    ).rejects.toBeInstanceOf(StagingLimitError);
  });
});

describe('the load queue of a sync', () => {
  it('runs loads one at a time in order, a failure does not stop the next, and room waits below the bound', async () => {
    const queue = new LoadQueue(2);
    const events: string[] = [];
    let running = 0;
    const gates: (() => void)[] = [];
    const load =
      (name: string, fail = false) =>
      async (): Promise<string> => {
        running++;
        expect(running).toBe(1);
        events.push(`start ${name}`);
        await new Promise<void>((resolve) => gates.push(resolve));
        running--;
        events.push(`end ${name}`);
        if (fail) throw new Error(`${name} failed`);
        return name;
      };
    const a = queue.enqueue(load('a', true));
    const b = queue.enqueue(load('b'));
    let roomed = false;
    const room = queue.room().then(() => (roomed = true));
    await tick();
    expect(roomed).toBe(false);
    gates.shift()?.();
    await expect(a).rejects.toThrow('a failed');
    await room;
    expect(roomed).toBe(true);
    await tick();
    gates.shift()?.();
    await expect(b).resolves.toBe('b');
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b']);
  });
});

describe('a private DuckDB connection that must spill', () => {
  it("spills into its temp folder even when the folder's parents do not exist yet", async () => {
    const temp = join(tempDir('lake-spill'), 'home', 'tmp', 'duckdb');
    const { connection, close } = await openPrivilegedConnection({
      memoryLimit: '32MB',
      threads: 1,
      tempDirectory: temp,
    });
    try {
      // A sort of ~300 MB of strings cannot stay within 32 MB.
      const sorted = await connection.runAndReadAll(
        `SELECT count(*) AS n FROM (SELECT md5(i::VARCHAR) || repeat('x', 40) AS s FROM range(2000000) t(i) ORDER BY s)`,
      );
      expect(Number(sorted.getRowObjectsJS()[0]?.n)).toBe(2_000_000);
      expect(existsSync(temp)).toBe(true);
    } finally {
      close();
    }
  }, 60_000);

  it('caps what is staged at once per table and per sync, and cuts segments by size as well as by records', async () => {
    const dir = tempDir('lake-staging-caps');
    const row = `${'x'.repeat(1000)}\n`;
    const stream = (rows: number): Readable => Readable.from(Array.from({ length: rows }, () => Buffer.from(row)));
    // A table may have 64 KiB on disk at once: loading (removing) its segments keeps it under; holding them fails.
    const budget = new StagingBudget({
      maxRecordBytes: 4096,
      maxTableStagingBytes: 64 << 10,
      maxSyncStagingBytes: 96 << 10,
    });
    const sizes: number[] = [];
    const loaded = new SegmentedStaging(
      dir,
      'a',
      1_000_000,
      (_path, _longest, bytes) => {
        sizes.push(bytes);
        budget.release('a', bytes);
      },
      () => {},
      { budget, table: 'a', maxSegmentBytes: 16 << 10 },
    );
    await pipeline(stream(200), loaded);
    expect(sizes.length).toBeGreaterThan(10);
    expect(Math.max(...sizes)).toBeLessThanOrEqual((16 << 10) + row.length);
    const held = new SegmentedStaging(
      dir,
      'b',
      1_000_000,
      () => {},
      () => {},
      { budget, table: 'b', maxSegmentBytes: 16 << 10 },
    );
    await expect(pipeline(stream(200), held)).rejects.toThrow(/per table \(LAKE_SYNC_MAX_TABLE_STAGING_BYTES\)/);
    // Another table of the same sync meets the sync's cap: b still holds its 64 KiB.
    const third = new SegmentedStaging(
      dir,
      'c',
      1_000_000,
      () => {},
      () => {},
      { budget, table: 'c', maxSegmentBytes: 16 << 10 },
    );
    await expect(pipeline(stream(200), third)).rejects.toBeInstanceOf(StagingLimitError);
    await expect(
      pipeline(
        stream(200),
        new SegmentedStaging(
          dir,
          'd',
          1_000_000,
          () => {},
          () => {},
          { budget, table: 'd', maxSegmentBytes: 16 << 10 },
        ),
      ),
    ).rejects.toThrow(/per sync \(LAKE_SYNC_MAX_STAGING_BYTES\)/);
  });

  it('writes every byte when a write takes only part of what it is given, and fails when it takes none', async () => {
    // A disk that fills part-way through a write answers with what fitted; only the next write says ENOSPC.
    const written: string[] = [];
    let takes = [5, 1, 3, 100];
    const file = {
      writev: async (buffers: Buffer[]) => {
        const all = Buffer.concat(buffers);
        const n = Math.min(takes.shift() ?? 0, all.length);
        written.push(all.subarray(0, n).toString());
        return { bytesWritten: n, buffers };
      },
    } as unknown as FileHandle;
    await writeAll(file, [Buffer.from('abc'), Buffer.from('defg'), Buffer.from('hij')]);
    expect(written.join('')).toBe('abcdefghij');
    expect(written).toEqual(['abcde', 'f', 'ghi', 'j']);
    takes = [2, 0];
    await expect(writeAll(file, [Buffer.from('xyz')])).rejects.toThrow(/took no more bytes/);
  });
});
