import { repeat } from '../core/repeat.js';
import type { JobRuntime } from './job-runtime.js';
import type { JobKind } from './job-store.js';

/** How many jobs of a kind one process runs at once, in all and of one organization. */
export interface PoolLimits {
  concurrency: number;
  perOrganization: number;
}

/** How one job of the pool's kind runs, once claimed here: it records its own outcome on the job. */
export type RunJob = (id: string, organizationId: string, signal: AbortSignal) => Promise<void>;

/**
 * Runs queued jobs of one kind in this process while it has room: those it accepted itself first, in order, then
 * (once polling) the oldest any process or replica accepted. The per-organization cap means one organization's
 * jobs (a hanging source, a thousand tables) never keep another's queued.
 */
export class JobPool {
  /** Accepted here to run here, in order, until there is room. */
  private readonly waiting: { id: string; organizationId: string }[] = [];
  private filling: Promise<void> | undefined;
  private refill = false;
  private poller: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly runtime: JobRuntime,
    private readonly kind: JobKind,
    private readonly limits: PoolLimits,
    private readonly runJob: RunJob,
  ) {}

  /** A job accepted here (recorded queued), to run here when there is room. */
  offer(id: string, organizationId: string): void {
    if (this.closed) return;
    this.waiting.push({ id, organizationId });
    this.fill();
  }

  /** Also takes the kind's queued jobs that other processes accepted, looking every `everyMs`. */
  startPolling(everyMs = 1000): void {
    if (this.poller || this.closed) return;
    this.poller = repeat(
      everyMs,
      async () => this.fill(),
      (error) => this.runtime.failed(`${this.kind} claim`, error),
    );
  }

  /** Stops taking work; what runs is given graceMs, then aborted. What waits here stays queued for another. */
  async close(graceMs: number): Promise<void> {
    this.closed = true;
    clearInterval(this.poller);
    this.poller = undefined;
    this.waiting.length = 0;
    await this.filling;
    await this.runtime.drain(this.kind, graceMs);
  }

  /** One fill at a time; a call meanwhile makes it look again once it is done. */
  private fill(): void {
    if (this.filling) {
      this.refill = true;
      return;
    }
    this.filling = (async () => {
      do {
        this.refill = false;
        while (!this.closed && this.runtime.runningOf(this.kind).length < this.limits.concurrency) {
          // The store unreachable for a moment: this fill stops, and the next poll (or a job ending) tries again.
          const started = await this.startNext().catch((error: unknown) => {
            this.runtime.failed(`${this.kind} claim`, error);
            return false;
          });
          if (!started) break;
        }
      } while (this.refill && !this.closed);
    })().finally(() => (this.filling = undefined));
  }

  /** Claims and starts one job: one accepted here first, else (polling) the oldest queued anywhere. */
  private async startNext(): Promise<boolean> {
    const full = this.organizationsAtCap();
    const index = this.waiting.findIndex((w) => !full.includes(w.organizationId));
    if (index >= 0) {
      const [next] = this.waiting.splice(index, 1) as [{ id: string; organizationId: string }];
      // Not claimed: cancelled while it waited, or taken by a replica with room first.
      if (await this.runtime.claim(next.id)) this.start(next.id, next.organizationId);
      return true;
    }
    if (!this.poller) return false;
    const claimed = await this.runtime.claimNext(this.kind, { organizationsFull: full });
    if (!claimed) return false;
    this.start(claimed.id, claimed.organizationId);
    return true;
  }

  private start(id: string, organizationId: string): void {
    void this.runtime
      .run(id, this.kind, organizationId, (signal) => this.runJob(id, organizationId, signal))
      .finally(() => this.fill());
  }

  private organizationsAtCap(): string[] {
    const counts = new Map<string, number>();
    for (const { organizationId } of this.runtime.runningOf(this.kind))
      counts.set(organizationId, (counts.get(organizationId) ?? 0) + 1);
    return [...counts].filter(([, n]) => n >= this.limits.perOrganization).map(([org]) => org);
  }
}
