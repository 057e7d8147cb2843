import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { mark } from '../../support/debug-timing.js';
import type { QueryEngine, QueryJob, QueryOutcome, RunningQuery } from '../engine/query-engine.js';
import { RESULT_FILE_NAME } from '../engine/query-runner.js';
import { guardSql } from '../engine/sql-guard.js';
import type { JobRuntime } from '../jobs/job-runtime.js';
import { TERMINAL_STATUSES } from '../jobs/job-store.js';
import { inBackground, repeat } from '../core/repeat.js';
import { LakeServiceError, programmingErrorFrom } from '../core/errors.js';
import { NO_METRICS, type LakeMetrics } from '../metrics/metrics.js';
import type { UsageService } from '../usage/usage-service.js';
import { FairQueue } from './fair-queue.js';
import type { QueryJobs } from './query-jobs.js';
import type { QueryResults } from './query-results.js';
import type { QuerySettings } from './settings.js';
import type { ClaimedQuery, QueryStore } from './store.js';

/** A query this process accepted or claimed and has not finished: queued here, or running on the engine. */
interface LiveQuery {
  id: string;
  organizationId: string;
  /** When this process took it (performance.now()): its wait in the queue here is measured from this. */
  accepted: number;
  job: QueryJob;
  /** The tags it was asked with, for metering by tag. */
  tags: readonly string[];
  /**
   * The organization's kept result bytes as read when it was accepted here, for a query that starts at once: its
   * start need not read them again a moment later (read again for a query that waited).
   */
  resultBytesKept?: number;
  running?: RunningQuery;
  done: Promise<void>;
  settle(): void;
  /** Releases the job's lease and cancel watch. */
  release(): void;
  /** Given up here without ending: claimed by another replica, or given back to the shared queue. */
  handedOn?: boolean;
  /** Taken from the queue to run here: no longer queued, not yet on the engine (its start awaits the store). */
  starting?: boolean;
  /** A stop asked while it was starting, applied once the engine has it. */
  stopWhenStarted?: 'abandoned' | 'cancelled';
  /** The engine has finished it and its outcome is being recorded: nothing is left to stop. */
  ending?: boolean;
  /** Lets the cache evict the files it read again. */
  releaseFiles?: () => void;
}

/** How the engine is shared between organizations. */
export interface Scheduling {
  /** Queries running at once; the engine's slots. */
  slots: number;
  /** Slots one organization may hold at once. */
  perOrganization: number;
}

/** How often a process with an idle worker looks for queries other replicas accepted but cannot start yet. */
const CLAIM_EVERY_MS = 250;
/** How often a wait on a query held elsewhere looks at its record, should a notice between replicas be lost. */
const WAIT_RECHECK_MS = 3000;

/**
 * Runs accepted queries on the engine: the fair queue between organizations, starting, finishing and recording
 * outcomes, stopping, claiming what other replicas could not start yet, and draining. The lease and the cancel
 * from any replica come from the job runtime; what a query may run was decided at intake.
 */
export class QueryExecution {
  private readonly live = new Map<string, LiveQuery>();
  private readonly queue: FairQueue<LiveQuery>;
  private claimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly runtime: JobRuntime,
    private readonly store: QueryStore,
    private readonly engine: QueryEngine,
    private readonly jobs: QueryJobs,
    private readonly results: QueryResults,
    private readonly settings: QuerySettings,
    scheduling: Scheduling,
    private readonly usage?: UsageService,
    private readonly metrics: LakeMetrics = NO_METRICS,
  ) {
    this.queue = new FairQueue(scheduling.slots, scheduling.perOrganization);
    // Queued here: a look at the store each lease round, for queries claimed or ended elsewhere meanwhile.
    runtime.onLeaseRound(() => this.lookAtQueued());
  }

  /** Queries waiting here for a slot, and running here (for metrics). */
  depth(): { waiting: number; running: number } {
    return this.queue.depth();
  }

  /** Queries waiting here, per organization (for metrics). */
  waitingByOrganization(): Map<string, number> {
    return this.queue.waitingByOrganization();
  }

  /** Whether a query of the organization would start at once (decided as it is recorded). */
  hasRoomFor(organizationId: string): boolean {
    return this.queue.hasRoomFor(organizationId);
  }

  /** Takes a recorded query: starts it when it was recorded running, queues it otherwise. */
  async accept(
    id: string,
    organizationId: string,
    job: QueryJob,
    startNow: boolean,
    accepted: { tags: readonly string[]; resultBytesKept: number },
  ): Promise<void> {
    const live = this.track(id, organizationId, job, accepted.tags, true);
    if (!startNow) return this.queue.enqueue(live);
    live.resultBytesKept = accepted.resultBytesKept;
    this.queue.started(organizationId);
    await this.begin(live, true);
  }

  /**
   * Waits, up to timeoutMs, for a query to end: one held here through its promise, one held by another replica
   * (or none) through its job's events, with a look at its record every few seconds should a notice be lost.
   */
  async waitFor(id: string, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    const live = this.live.get(id);
    if (live && timeoutMs > 0) {
      await within(live.done, timeoutMs);
      if (!live.handedOn) return;
    }
    // Held elsewhere, or settled here without ending: another replica claimed it from this one's queue.
    const left = deadline - performance.now();
    if (left > 0) await within(this.endedAnywhere(id), left);
  }

  /** Settles once the query, if this process holds it, has ended; at once otherwise. */
  async settled(id: string): Promise<void> {
    await this.live.get(id)?.done;
  }

  /** Settles when the query's record says it ended (or there is none), seen through its job's events. */
  private endedAnywhere(id: string): Promise<void> & { dispose(): void } {
    let unlisten = (): void => undefined;
    let recheck: NodeJS.Timeout | undefined;
    const ended = new Promise<void>((resolve) => {
      const look = (): void =>
        inBackground(
          async () => {
            const holder = await this.runtime.store.holder(id);
            if (!holder || TERMINAL_STATUSES.has(holder.status)) resolve();
          },
          // A look that failed is made again by the next event or recheck.
          (error) => this.runtime.failed('query wait', error, id),
        );
      unlisten = this.runtime.store.onEvent(id, look);
      recheck = setInterval(look, WAIT_RECHECK_MS);
      look();
    });
    return Object.assign(ended, {
      dispose: () => {
        unlisten();
        clearInterval(recheck);
      },
    });
  }

  /**
   * On a store replicas share: while a worker here is idle, take the oldest query another replica accepted but has
   * no free worker for (FOR UPDATE SKIP LOCKED, so each is taken once), and run it here.
   */
  startClaiming(): void {
    this.claimer ??= repeat(
      CLAIM_EVERY_MS,
      () => this.claimQueued(),
      (e) => this.runtime.failed('query claim', e),
    );
  }

  private async claimQueued(): Promise<void> {
    while (this.claimer && this.queue.hasIdleSlot()) {
      // The slot is held while the claim is made, so a query submitted meanwhile cannot take it too.
      this.queue.reserveSlot();
      let claimed: ({ id: string } & ClaimedQuery) | undefined;
      try {
        const taken = await this.runtime.claimNext('query', {
          organizationsFull: this.queue.organizationsAtShare(),
          notHeldHere: true,
        });
        const found = taken && (await this.store.claimed(taken.id));
        claimed = taken && found ? { id: taken.id, ...found } : undefined;
      } finally {
        this.queue.releaseSlot();
      }
      if (!claimed) return;
      this.queue.started(claimed.organizationId);
      await this.adopt(claimed);
    }
  }

  /** Runs a query another replica accepted, now claimed (running, under this process's lease). */
  private async adopt(claimed: { id: string } & ClaimedQuery) {
    const { id, organizationId, sql, plan } = claimed;
    let job: QueryJob;
    try {
      if (!plan) throw new Error('This query was accepted by an older lake that did not record what it reads.');
      await this.jobs.ensureSession(organizationId, plan);
      const { statement, explain } = guardSql(sql);
      job = { ...this.jobs.fromPlan(id, organizationId, statement, plan), ...(explain ? { explain } : {}) };
      mkdirSync(job.resultDir, { recursive: true, mode: 0o700 });
    } catch (error) {
      this.queue.ended(organizationId);
      const message = `${error instanceof Error ? error.message : String(error)} Run it again.`;
      await this.store.markEnded(id, 'failed', { code: 'query_abandoned', message }, 0);
      return;
    }
    await this.begin(this.track(id, organizationId, job, claimed.tags, false), true);
  }

  /**
   * Lets queries in flight finish for up to graceMs, then stops the rest and records them as failed with the
   * reason, so no query is left queued or running after the process that held it is gone.
   */
  async drain(graceMs: number): Promise<void> {
    if (this.claimer) {
      clearInterval(this.claimer);
      this.claimer = undefined;
      // Replicas share the queue: what waits here is given back for another to run, not failed.
      const waiting = [...this.live.values()].filter((live) => !live.running);
      const given = new Set(await this.runtime.handBack(waiting.map((live) => live.id)));
      for (const live of waiting) if (given.has(live.id)) this.forgetQueued(live);
    }
    const all = (): Promise<unknown> => Promise.allSettled([...this.live.values()].map((r) => r.done));
    await within(
      all().then(() => undefined),
      graceMs,
    );
    for (const id of [...this.live.keys()]) await this.stop(id, 'abandoned');
    await all();
    await this.engine.close();
  }

  /**
   * Stops a query this process holds; false when it is held elsewhere (or not at all). A queued one ends at once
   * and never runs; a running one is interrupted (and, by a worker pool, killed if it does not stop).
   */
  async stop(id: string, reason: 'abandoned' | 'cancelled'): Promise<boolean> {
    const live = this.live.get(id);
    if (!live) return false;
    if (live.running) live.running.stop(reason);
    else if (live.starting) live.stopWhenStarted ??= reason;
    else if (await this.releaseIfTakenElsewhere(live)) return false;
    else if (this.queue.remove(live)) {
      const error =
        reason === 'cancelled'
          ? { code: 'cancelled', message: 'Cancelled before it started.' }
          : {
              code: 'query_abandoned',
              message: 'The lake process holding this query stopped before it could start. Run it again.',
            };
      await this.store.markEnded(id, reason === 'cancelled' ? 'cancelled' : 'failed', error, null);
      this.engine.forget(id);
      rmSync(live.job.resultDir, { recursive: true, force: true });
      this.untrack(live);
    }
    return true;
  }

  /** Holds a query here: `recordedJustNow` when this process recorded it in the same call, `false` when claimed. */
  private track(
    id: string,
    organizationId: string,
    job: QueryJob,
    tags: readonly string[],
    recordedJustNow: boolean,
  ): LiveQuery {
    let settle = (): void => undefined;
    const done = new Promise<void>((resolve) => (settle = resolve));
    const live: LiveQuery = {
      id,
      organizationId,
      accepted: performance.now(),
      job,
      tags,
      done,
      settle,
      release: () => undefined,
    };
    this.live.set(id, live);
    // Asked to cancel anywhere, or ended elsewhere while queued here: stopped, unless its outcome is being recorded.
    live.release = this.runtime.hold(
      id,
      () => {
        if (!live.ending)
          inBackground(
            () => this.stop(id, 'cancelled'),
            (e) => this.runtime.failed('query cancel', e, id),
          );
      },
      { recordedJustNow },
    );
    return live;
  }

  private untrack(live: LiveQuery): void {
    this.live.delete(live.id);
    live.release();
    live.settle();
  }

  /** A queued query given back or taken by another replica: forgotten here, its record and result left alone. */
  private forgetQueued(live: LiveQuery): void {
    if (!this.queue.remove(live)) return;
    this.engine.forget(live.id);
    live.handedOn = true;
    this.untrack(live);
  }

  /** A query queued here that another replica claimed is theirs, running or ended: forgotten here. True if so. */
  private async releaseIfTakenElsewhere(live: LiveQuery): Promise<boolean> {
    if (!(await this.startedElsewhere(live.id))) return false;
    this.forgetQueued(live);
    return true;
  }

  /** Whether a query this process has not started was started by another (a query cancelled while queued never was). */
  private async startedElsewhere(id: string): Promise<boolean> {
    const holder = await this.runtime.store.holder(id);
    if (!holder?.started) return false;
    return holder.status !== 'running' || holder.owner !== this.runtime.workerId;
  }

  /** Each lease round: queries queued here that were claimed or ended elsewhere are let go; the queue is pumped. */
  private async lookAtQueued(): Promise<void> {
    // Each look at the store is a wait, during which the query may start here (then it is left be).
    const queuedHere = (live: LiveQuery): boolean => !live.starting && !live.running;
    for (const live of [...this.live.values()]) {
      if (!queuedHere(live) || (await this.runtime.store.holder(live.id))?.status === 'queued') continue;
      if (!(await this.releaseIfTakenElsewhere(live)) && queuedHere(live)) await this.stop(live.id, 'cancelled');
    }
    // A query that could not start while the store was unreachable starts now, if a worker is free.
    await this.pump();
  }

  /**
   * Starts a query on the engine; it has a slot (counted in the queue). One recorded queued is claimed first, which
   * fails if it was cancelled meanwhile. False when the store could not be reached: the query waits again, at the
   * back of its organization's queue, for the next chance (a query ending, a submission, the lease round).
   */
  private async begin(live: LiveQuery, recordedRunning: boolean): Promise<boolean> {
    live.starting = true;
    let claimed: boolean;
    try {
      claimed = recordedRunning || (await this.runtime.claim(live.id));
    } catch {
      // The store unreachable: the query waits again (see above), and the lease round retries it.
      live.starting = false;
      this.queue.ended(live.organizationId);
      this.queue.enqueue(live);
      return false;
    }
    if (!claimed) {
      // Cancelled while it waited (possibly by another process), or claimed by a replica with a free worker first.
      this.engine.forget(live.id);
      if (!(await this.startedElsewhere(live.id))) rmSync(live.job.resultDir, { recursive: true, force: true });
      this.queue.ended(live.organizationId);
      this.untrack(live);
      await this.pump();
      return true;
    }
    this.metrics.queryStarted(live.organizationId, (performance.now() - live.accepted) / 1000);
    // Without the store, the per-result cap alone; the organization's storage was checked when it was accepted.
    const limit = await this.resultLimit(live.organizationId, live.resultBytesKept).catch((error: unknown) => {
      this.runtime.failed('query result limit', error, live.id);
      return {};
    });
    live.job.limits = { ...live.job.limits, ...limit };
    try {
      // With an object store, its files are fetched into the cache (if not there) and kept there while it runs.
      live.releaseFiles = await this.jobs.holdFiles(live.job);
    } catch (error) {
      live.starting = false;
      // Its files could not be fetched (checked when it was accepted; evicted or the store gone since): run again.
      const message = error instanceof LakeServiceError ? error.message : 'Its files could not be read.';
      await this.finish(live, {
        status: 'failed',
        code: 'query_failed',
        message: `${message} Run it again.`,
        durationMs: 0,
      });
      return true;
    }
    const running = this.engine.start(live.job);
    live.running = running;
    live.starting = false;
    if (live.stopWhenStarted) running.stop(live.stopWhenStarted);
    const crashed = (error: unknown): QueryOutcome => ({
      status: 'failed',
      code: 'worker_crashed',
      message: this.jobs.cleanMessage(String(error)),
      durationMs: 0,
    });
    inBackground(
      () =>
        running.outcome.then(
          (outcome) => this.finish(live, outcome),
          (e) => this.finish(live, crashed(e)),
        ),
      // finish() has already settled the query's waiters; a failed record is found by its lease running out.
      (error) => this.runtime.failed('query outcome', error, live.id),
    );
    return true;
  }

  private async finish(live: LiveQuery, outcome: QueryOutcome): Promise<void> {
    live.ending = true;
    live.releaseFiles?.();
    mark('engine finished');
    // The worker is free once the engine has answered: the next query starts while this one's outcome is being
    // recorded (a few round trips to the store, which on PostgreSQL would otherwise hold the slot for longer than
    // a small query runs).
    this.queue.ended(live.organizationId);
    inBackground(
      () => this.pump(),
      (error) => this.runtime.failed('query queue', error),
    );
    const file = join(live.job.resultDir, RESULT_FILE_NAME);
    try {
      const { tags } = live;
      if (outcome.status === 'succeeded') {
        // Kept where results are kept (uploaded, with an object store) before the query says where it is; a store
        // that fails here fails the query, with the store's reason.
        const kept = await this.results.publish(file).then(
          () => undefined,
          (error: unknown) => error,
        );
        if (kept !== undefined) {
          rmSync(file, { force: true });
          return await this.finishFailed(live, kept, tags);
        }
        this.metrics.queryEnded('succeeded');
        // Metered once it has run (its result and the query itself), in the outcome's transaction.
        const usage = this.usage;
        await this.store.markSucceeded(
          live.id,
          { ...outcome, resultFile: this.results.relativePath(file) },
          usage &&
            (() => usage.recordEach(live.organizationId, { result_bytes: outcome.resultBytes, queries_run: 1 }, tags)),
        );
        this.results.keepFirstPage(live.id, outcome.firstRows);
      } else {
        this.metrics.queryEnded(outcome.status === 'cancelled' ? 'cancelled' : outcome.code);
        // An error of lake's own code: its caller was told only that; the stack is for the server's log.
        if (outcome.internalError !== undefined)
          this.runtime.failed('query', programmingErrorFrom(outcome.internalError), live.id);
        const error = { code: outcome.code, message: this.jobs.cleanMessage(outcome.message, live.job) };
        await this.store.markEnded(live.id, outcome.status, error, outcome.durationMs);
        rmSync(file, { force: true });
        // Metered once it has run, whether it succeeded or not.
        await this.usage?.record(live.organizationId, 'queries_run', 1, tags);
      }
      mark('outcome recorded');
    } finally {
      this.untrack(live);
    }
  }

  /** A query that ran but whose result could not be kept: failed with the store's reason, and counted so. */
  private async finishFailed(live: LiveQuery, error: unknown, tags: readonly string[]): Promise<void> {
    const { code, message } =
      error instanceof LakeServiceError ? error : { code: 'internal_error', message: 'The result could not be kept.' };
    this.metrics.queryEnded(code);
    await this.store.markEnded(live.id, 'failed', { code, message }, null);
    await this.usage?.record(live.organizationId, 'queries_run', 1, tags);
  }

  /** Starts queued queries while the engine has slots for them. */
  private async pump(): Promise<void> {
    for (let next = this.queue.take(); next; next = this.queue.take()) {
      if (!(await this.begin(next, false))) return;
    }
  }

  /** The bytes a result may take: the per-result cap, or what is left of the organization's storage if less. */
  private async resultLimit(
    organizationId: string,
    kept?: number,
  ): Promise<Pick<QueryJob['limits'], 'maxResultBytes' | 'resultLimitCode'>> {
    const left = Math.max(
      0,
      this.settings.orgResultStorageBytes - (kept ?? (await this.store.resultBytesKept(organizationId))),
    );
    return left < this.settings.maxResultBytes
      ? { maxResultBytes: left, resultLimitCode: 'result_storage_full' }
      : { maxResultBytes: this.settings.maxResultBytes, resultLimitCode: 'result_too_large' };
  }
}

/** Settles when the promise does or after ms, whichever is first; disposes what the promise watches. */
async function within(promise: Promise<void> & { dispose?(): void }, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
  promise.dispose?.();
}
