import type { Clock } from '../core/clock.js';
import { repeat } from '../core/repeat.js';
import type { FailureReport } from './job-runtime.js';

/** Work that comes due on a schedule (sends today; scheduled syncs reuse it). */
export interface ScheduledWork<T, R> {
  /** What is due at this time (seconds since the epoch): its tick has come. */
  due(nowSeconds: number): Promise<T[]>;
  /**
   * Moves the item's tick on from the one `due` read, as a compare-and-set: false when another scheduler (another
   * replica reading the same due item) moved it first. This is what makes each tick run once across replicas.
   */
  claimTick(item: T, nowSeconds: number): Promise<boolean>;
  /** Starts the item's run for the tick this scheduler claimed; undefined when it did not start (one is live). */
  start(item: T): Promise<R | undefined>;
}

/** Runs due work once per tick, every `everyMs`, in every process that shares the store. */
export class Scheduler<T, R> {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly name: string,
    private readonly work: ScheduledWork<T, R>,
    private readonly clock: Clock,
    private readonly failed: FailureReport = () => undefined,
  ) {}

  start(everyMs = 1000): void {
    if (this.timer) return;
    this.timer = repeat(
      everyMs,
      () => this.runDue(),
      (error) => this.failed(`${this.name} schedule`, error),
    );
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Starts each due item whose tick this scheduler claimed; returns the runs started. */
  async runDue(): Promise<R[]> {
    const now = Math.floor(this.clock.now() / 1000);
    const started: R[] = [];
    for (const item of await this.work.due(now)) {
      try {
        if (!(await this.work.claimTick(item, now))) continue;
        const run = await this.work.start(item);
        if (run !== undefined) started.push(run);
      } catch (error) {
        // One item's failure (its run refused, the store gone for a moment) leaves the others' ticks to run.
        this.failed(`${this.name} schedule`, error);
      }
    }
    return started;
  }
}
