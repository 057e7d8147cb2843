/** Segments staged and not yet loaded, at most, across a sync's connections: bounds the staging disk. */
export const MAX_WAITING_LOADS = 4;

/**
 * The loads of one sync (staged CSV → Parquet, in DuckDB), run one at a time in the order they were queued,
 * whichever connection extracted them and whichever table they belong to. One at a time, because a load already
 * uses every core DuckDB has and the memory a sync may take; in a queue, so that extracting the next table at the
 * source overlaps loading the last one (the source's connection never waits for DuckDB, nor DuckDB for it).
 * At most `maxWaiting` loads wait at once: extraction waits for room, so staged files on disk stay bounded.
 */
export class LoadQueue {
  private chain: Promise<unknown> = Promise.resolve();
  private waiting = 0;
  private roomWaiters: (() => void)[] = [];

  constructor(private readonly maxWaiting: number) {}

  /** Runs `load` after every load queued before it. */
  enqueue<T>(load: () => Promise<T>): Promise<T> {
    this.waiting++;
    const result = this.chain.then(load).finally(() => {
      this.waiting--;
      this.roomWaiters.shift()?.();
    });
    // The chain only orders loads; each caller gets its own failure through `result`.
    this.chain = result.catch(() => {});
    return result;
  }

  /** Resolves when fewer than `maxWaiting` loads are queued or running. */
  async room(): Promise<void> {
    while (this.waiting >= this.maxWaiting) await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
  }
}
