import { availableParallelism } from 'node:os';

/**
 * Connections a sync reads over when a source does not say (`sync_connections`): a core for each beyond the first,
 * at least two and at most three. Since a large table is read in ranges over them, two beat one by 12% on two cores
 * for 25 MB more memory, and a third bought nothing there (bench/sync-tables.mjs, docs/performance.md).
 */
export const DEFAULT_SYNC_CONNECTIONS = Math.min(3, Math.max(2, availableParallelism() - 1));

/**
 * Smallest share of a table worth a connection of its own. Below it, the second COPY's start (a new segment, a
 * savepoint, a scan that reaches its first block) costs more than reading on one connection saves.
 */
export const MIN_RANGE_BYTES = 32 << 20;

/**
 * Splits a table of `bytes` on disk into at most `connections` ranges of its heap blocks, as conditions on `ctid`
 * that PostgreSQL (14 and later) answers with a TID range scan, reading only those blocks. The first range is open
 * below and the last open above, so together they cover every row version exactly once whatever the table's size
 * is by the time each range is read (rows written after the size was taken are beyond the snapshot, or in blocks
 * the last range reads). One range, with no condition, when splitting would not pay.
 */
export function rangeConditions(bytes: number, blockSize: number, connections: number): string[] {
  const count = Math.min(connections, Math.floor(bytes / MIN_RANGE_BYTES));
  if (count < 2 || blockSize <= 0) return [''];
  const blocks = Math.ceil(bytes / blockSize);
  const edge = (i: number): number => Math.round((i * blocks) / count);
  const tid = (block: number): string => `'(${block},0)'::tid`;
  return Array.from({ length: count }, (_, i) => {
    if (i === 0) return `ctid < ${tid(edge(1))}`;
    if (i === count - 1) return `ctid >= ${tid(edge(i))}`;
    return `ctid >= ${tid(edge(i))} AND ctid < ${tid(edge(i + 1))}`;
  });
}

/** One range of a table's read: run once, by whichever connection claims it first. */
export class RangeRead {
  private claimed = false;
  private settle!: (ok: boolean) => void;
  /** True once read in full, false if the read failed; settles only after a connection ran it. */
  readonly done = new Promise<boolean>((resolve) => (this.settle = resolve));

  constructor(private readonly read: (client: import('pg').Client) => Promise<boolean>) {}

  /** Takes the range for the caller; false if another connection already has it. */
  claim(): boolean {
    if (this.claimed) return false;
    this.claimed = true;
    return true;
  }

  /** Reads the range (after a successful claim) over `client`; resolves to whether it was read in full. */
  async run(client: import('pg').Client): Promise<boolean> {
    // The reader records its own failure (the table's reason); here it only means "not read in full".
    const ok = await this.read(client).catch(() => false);
    this.settle(ok);
    return ok;
  }
}

/**
 * Where a table being read offers its other ranges to the sync's idle connections. A connection looks here before
 * it takes a new table, so a large table's ranges are read side by side; a connection with no table left waits
 * here while any table is still being read (it may yet offer ranges). A range nobody took is read by the table's
 * own connection once it is done with its first.
 */
export class RangeBoard {
  private offered: RangeRead[] = [];
  private reading = 0;
  private waiters: (() => void)[] = [];

  /** A table is being read: until `doneReading`, it may offer ranges. */
  startReading(): void {
    this.reading++;
  }

  doneReading(): void {
    this.reading--;
    this.wake();
  }

  offer(reads: readonly RangeRead[]): void {
    this.offered.push(...reads);
    this.wake();
  }

  /** Claims the oldest range still unread, if any. */
  take(): RangeRead | undefined {
    while (this.offered.length > 0) {
      const read = this.offered.shift() as RangeRead;
      if (read.claim()) return read;
    }
    return undefined;
  }

  /** Claims the next range offered; undefined once no table is being read that could offer one. */
  async next(): Promise<RangeRead | undefined> {
    for (;;) {
      const read = this.take();
      if (read || this.reading === 0) return read;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
