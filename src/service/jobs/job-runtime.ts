import { newId } from '../core/ids.js';
import { inBackground } from '../core/repeat.js';
import type { JobKind, JobStore } from './job-store.js';
import type { JobSettings } from './settings.js';

/**
 * Told of a failure in work nobody waits for (a lease round, a cancel check, a job that threw past its own
 * handling), with the job it concerns; lake serve logs it once, redacted. The work itself goes on.
 */
export type FailureReport = (work: string, error: unknown, jobId?: string) => void;

/** A job this process holds under its lease, and what to do when someone asks to cancel it. */
interface HeldJob {
  onCancel(): void;
  unlisten(): void;
  /** Settles when the job is released. */
  released: Promise<void>;
}

/** A job this process runs to its end through `run`. */
interface RunningJob {
  kind: JobKind;
  organizationId: string;
  done: Promise<void>;
  stop: AbortController;
}

/**
 * What every kind of job (query, sync, send) shares once a process holds it: the lease that tells other replicas
 * it is alive, the cancel that reaches it from any replica (NOTIFY at once, the durable flag at the next lease
 * round should a notice be lost), claiming queued work (FOR UPDATE SKIP LOCKED across replicas), handing queued
 * work back on shutdown, and the drain that stops what is left. A kind says only how to run one job.
 */
export class JobRuntime {
  /** Names this process in job leases. */
  readonly workerId = newId('wrk');
  private readonly held = new Map<string, HeldJob>();
  private readonly running = new Map<string, RunningJob>();
  private readonly roundTasks = new Set<() => Promise<void>>();
  /** Cancel checks in flight, so a burst of a job's events makes one look at the store, not one each. */
  private readonly checking = new Set<string>();
  private renewing = false;
  /** Wakes the lease loop when the last job here is released, so it never holds a finished process open. */
  private idle = new AbortController();

  constructor(
    readonly store: JobStore,
    readonly settings: JobSettings,
    readonly failed: FailureReport = () => undefined,
  ) {}

  /** The lease a job taken now holds: this process, until a lease length from now on the store's clock. */
  lease(): { owner: string; expiresMs: number } {
    return { owner: this.workerId, expiresMs: this.store.clockNow() + this.settings.leaseMs };
  }

  /** Takes one queued job for this process (running, under its lease); false when it was taken or ended first. */
  claim(id: string): Promise<boolean> {
    return this.store.claim(id, this.workerId, this.lease().expiresMs);
  }

  /**
   * Takes the oldest queued job of a kind that any process accepted, leaving out organizations this process has no
   * room for and, with `notHeldHere`, what this process already holds in its own queue.
   */
  claimNext(
    kind: JobKind,
    options: { organizationsFull?: readonly string[]; notHeldHere?: boolean } = {},
  ): Promise<{ id: string; organizationId: string } | undefined> {
    return this.store.claimNext(kind, this.workerId, this.lease().expiresMs, {
      organizations: options.organizationsFull ?? [],
      ...(options.notHeldHere ? { heldBy: this.workerId } : {}),
    });
  }

  /** Gives queued jobs held here back to the shared queue for another replica; returns those given back. */
  handBack(ids: readonly string[]): Promise<string[]> {
    return this.store.handBack(this.workerId, ids);
  }

  /**
   * Holds a job this process has recorded or claimed under its lease: renews the lease until released, and calls
   * onCancel once someone asks to cancel it, here or on another replica, or its record ends without this process.
   * Returns the release.
   */
  hold(id: string, onCancel: () => void, options: { recordedJustNow?: boolean } = {}): () => void {
    let cancelled = false;
    const once = (): void => {
      if (cancelled) return;
      cancelled = true;
      onCancel();
    };
    // A cancel asked on another replica arrives at once (NOTIFY on a shared store).
    const unlisten = this.store.onStopAsked(id, () => this.checkCancel([id]));
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    this.held.set(id, { onCancel: once, unlisten, released });
    // A cancel asked while the job was being claimed or started came before the listener: look once now. A job
    // this process recorded a moment ago has had no time for one (its id was not yet given out); should one have
    // come, the next lease round finds it.
    if (!options.recordedJustNow) this.checkCancel([id]);
    this.keepLeases();
    return () => {
      if (this.held.get(id)?.unlisten !== unlisten) return;
      this.held.delete(id);
      unlisten();
      release();
      if (this.held.size === 0) this.idle.abort();
    };
  }

  /** Whether this process holds the job: it is alive, and renews the job's lease. */
  holds(id: string): boolean {
    return this.held.has(id);
  }

  /** Settles when this process no longer holds the job (at once when it does not). */
  async released(id: string): Promise<void> {
    await this.held.get(id)?.released;
  }

  /**
   * Runs a job held here to its end: `work` gets a signal aborted on cancel or at the end of a drain's grace, and
   * records the job's outcome itself. What escapes it is reported, and the job's lease then lapses (worker_lost).
   */
  run(id: string, kind: JobKind, organizationId: string, work: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const stop = new AbortController();
    const release = this.hold(id, () => stop.abort());
    const done = Promise.resolve()
      .then(() => work(stop.signal))
      .catch((error: unknown) => this.failed(`${kind} run`, error, id))
      .finally(() => {
        release();
        this.running.delete(id);
      });
    this.running.set(id, { kind, organizationId, done, stop });
    return done;
  }

  /** Jobs of a kind this process runs through `run`, with their organizations. */
  runningOf(kind: JobKind): { id: string; organizationId: string }[] {
    return [...this.running].filter(([, r]) => r.kind === kind).map(([id, r]) => ({ id, ...r }));
  }

  /** Settles when the job, if this process runs it through `run`, has ended. */
  async settled(id: string): Promise<void> {
    await this.running.get(id)?.done;
  }

  /** Lets the runs of a kind finish for up to graceMs, then aborts the rest and waits for them to record it. */
  async drain(kind: JobKind, graceMs: number): Promise<void> {
    const runs = [...this.running.values()].filter((r) => r.kind === kind);
    const all = Promise.allSettled(runs.map((r) => r.done));
    const timer = setTimeout(() => {
      for (const run of runs) run.stop.abort();
    }, graceMs);
    await all;
    clearTimeout(timer);
  }

  /** Work a kind adds to every lease round while jobs are held here (queries look at their queue). */
  onLeaseRound(task: () => Promise<void>): void {
    this.roundTasks.add(task);
  }

  /**
   * Calls onCancel of the held jobs someone asked to cancel (the durable flag, readable by every replica) or that
   * ended without this process. A job's own ending is an event too: its onCancel then finds nothing left to stop.
   */
  private checkCancel(ids: readonly string[]): void {
    const fresh = ids.filter((id) => !this.checking.has(id));
    if (fresh.length === 0) return;
    for (const id of fresh) this.checking.add(id);
    inBackground(
      async () => {
        try {
          for (const id of await this.store.toStop(fresh)) this.held.get(id)?.onCancel();
        } finally {
          for (const id of fresh) this.checking.delete(id);
        }
      },
      (error) => this.failed('cancel check', error, fresh.length === 1 ? fresh[0] : undefined),
    );
  }

  /**
   * While jobs are held here: renew their leases (so no one takes them for lost) every third of a lease, at most
   * every second, on the jobs' clock; look for cancels whose notice was lost; run the kinds' round work.
   */
  private keepLeases(): void {
    if (this.renewing) return;
    this.renewing = true;
    this.idle = new AbortController();
    const idle = this.idle.signal;
    const every = Math.min(1000, this.settings.leaseMs / 3);
    void (async () => {
      while (this.held.size > 0) {
        await this.store.clock.sleep(every, idle);
        if (idle.aborted) break;
        // The store unreachable (PostgreSQL restarting): the next round tries again, within the lease.
        await this.leaseRound().catch((error: unknown) => this.failed('lease renewal', error));
      }
      this.renewing = false;
      // A job held while this loop was ending needs a loop of its own.
      if (this.held.size > 0) this.keepLeases();
    })();
  }

  private async leaseRound(): Promise<void> {
    const ids = [...this.held.keys()];
    await this.store.renewLeases(this.workerId, ids, this.lease().expiresMs);
    for (const id of await this.store.toStop(ids)) this.held.get(id)?.onCancel();
    for (const task of this.roundTasks) await task();
  }
}
