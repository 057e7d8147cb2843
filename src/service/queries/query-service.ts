import { inBackground, repeat } from '../repeat.js';
import { mark } from '../../debug-timing.js';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { principalIdOf } from '../auth/ownership.js';
import type { Principal } from '../auth/principal.js';
import { assertNoIntrospection } from '../catalog/introspection.js';
import type { PermissionStore, TableAccess } from '../catalog/permissions.js';
import type { QueryEngine, QueryJob, QueryOutcome, RunningQuery } from '../engine/query-engine.js';
import { RESULT_FILE_NAME } from '../engine/query-runner.js';
import type { TableReference } from '../engine/table-refs.js';
import { guardSql } from '../engine/sql-guard.js';
import { LakeServiceError } from '../errors.js';
import { hashRequest, type IdempotencyScope, type IdempotencyStore } from '../idempotency.js';
import { newId } from '../ids.js';
import { TERMINAL_STATUSES, type JobStore } from '../jobs/job-store.js';
import type { UsageService } from '../usage/usage-service.js';
import type { JobSettings } from '../jobs/settings.js';
import type { Lake } from '../lake/lake.js';
import { lock, type MetadataDb } from '../store/metadata-db.js';
import { FairQueue } from './fair-queue.js';
import { FirstPages } from './first-pages.js';
import type { QuerySettings } from './settings.js';
import { QueryStore, type QueryPlan, type QueryRecord } from './store.js';

export { principalIdOf };

export interface SubmitOutcome {
  /** The query; for a replayed Idempotency-Key, as the first submission answered it (its status then). */
  query: QueryRecord;
  replayed: boolean;
}

/** A query this process accepted and has not finished: queued here, or running on the engine. */
interface LiveQuery {
  id: string;
  organizationId: string;
  job: QueryJob;
  running?: RunningQuery;
  done: Promise<void>;
  settle(): void;
  /** Stops listening for the job's events (a cancel asked on another replica arrives as one). */
  unlisten(): void;
  /** Given up here without ending: claimed by another replica, or given back to the shared queue. */
  handedOn?: boolean;
  /** Taken from the queue to run here: no longer queued, not yet on the engine (its start awaits the store). */
  starting?: boolean;
  /** A stop asked while it was starting, applied once the engine has it. */
  stopWhenStarted?: 'abandoned' | 'cancelled';
  /** The engine has finished it and its outcome is being recorded: nothing is left to stop. */
  ending?: boolean;
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

/** What a query is asked with. */
export interface QueryInput {
  sql: string;
}

export class QueryService {
  readonly store: QueryStore;
  /** First pages of results that just succeeded, read back by the engine that wrote them. */
  readonly firstPages = new FirstPages();
  private readonly live = new Map<string, LiveQuery>();
  private readonly queue: FairQueue<LiveQuery>;
  /** Names this process in job leases. */
  private readonly workerId = newId('wrk');
  private renewing = false;
  /** Wakes the lease loop when the last query here ends, so it never holds a finished process open. */
  private idle = new AbortController();
  /** Takes queued queries of other replicas while a worker here is idle (a shared store only). */
  private claimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: MetadataDb,
    private readonly lake: Lake,
    private readonly idempotency: IdempotencyStore,
    private readonly permissions: PermissionStore,
    private readonly jobs: JobStore,
    private readonly jobSettings: JobSettings,
    readonly settings: QuerySettings,
    private readonly engine: QueryEngine,
    scheduling: Scheduling,
    private readonly usage?: UsageService,
  ) {
    this.store = new QueryStore(db, jobs);
    this.queue = new FairQueue(scheduling.slots, scheduling.perOrganization);
  }

  /** Makes ready what the next query needs (lake serve does this at start). */
  warm(): void {
    this.engine.warm();
  }

  /**
   * Checks the SQL, records the query and starts it, or queues it when the engine has no slot for it: answers at
   * once either way. Everything that can be refused before execution is refused here, with the spec's codes.
   */
  async submit(principal: Principal, input: QueryInput, idempotencyKey: string | undefined): Promise<SubmitOutcome> {
    const { sql } = input;
    await this.permissions.assertServiceKeyAllowed(principal);
    mark('query submitted to the service');
    const { statement, tokens, explain } = guardSql(sql);
    mark('guarded');
    const access = await this.permissions.accessFor(principal);
    if (access.restricted) assertNoIntrospection(tokens);
    const scope: IdempotencyScope = {
      organizationId: principal.organizationId,
      principalId: principalIdOf(principal),
      operation: 'queries.submit',
    };
    const requestHash = hashRequest(sql);
    const early = idempotencyKey ? await this.replay(scope, idempotencyKey, requestHash) : undefined;
    if (early) return early;
    await this.assertResultStorageLeft(principal.organizationId);

    const id = newId('qr');
    const job = {
      ...(await this.jobFor(id, principal.organizationId, access, statement)),
      ...(explain ? { explain } : {}),
    };
    mark('catalog file ready');
    mkdirSync(job.resultDir, { recursive: true, mode: 0o700 });
    const discard = (): void => {
      this.engine.forget(id);
      rmSync(job.resultDir, { recursive: true, force: true });
    };
    let parseError: string | undefined;
    let outcome: SubmitOutcome;
    let startNow = false;
    try {
      try {
        const references = await this.engine.inspect(job);
        if (access.restricted) await this.assertReadable(principal.organizationId, access, references);
      } catch (error) {
        // DuckDB could not parse it: a failed query, with nothing executed (docs/decisions.md, 12).
        if (error instanceof LakeServiceError) throw error;
        parseError = this.cleanMessage(error instanceof Error ? error.message : String(error));
      }
      mark('inspected');
      outcome = await this.record(
        principal,
        scope,
        idempotencyKey,
        requestHash,
        { id, sql, plan: job.plan },
        (org) => (startNow = parseError === undefined && this.queue.hasRoomFor(org)),
      );
    } catch (error) {
      discard();
      throw error;
    }
    if (outcome.replayed) {
      // Another request with this key won the race while this one was checking its SQL.
      discard();
      return outcome;
    }
    if (parseError !== undefined) {
      await this.store.markEnded(id, 'failed', { code: 'query_failed', message: parseError }, 0);
      discard();
      return { query: (await this.store.get(principal.organizationId, id)) as QueryRecord, replayed: false };
    }
    mark('recorded');
    const live = this.track(id, principal.organizationId, job);
    if (startNow) {
      this.queue.started(live.organizationId);
      await this.begin(live, true);
    } else this.queue.enqueue(live);
    this.keepLeases();
    return outcome;
  }

  /**
   * A query of the caller's organization. A principal restricted by table permissions sees only its own queries:
   * another's SQL and results could show tables it may not read.
   */
  async get(principal: Principal, id: string): Promise<QueryRecord> {
    await this.permissions.assertServiceKeyAllowed(principal);
    // A query held by a process that died is failed here at the latest, when someone looks at it.
    await this.jobs.expireLeases(id);
    const query = await this.store.get(principal.organizationId, id);
    const hidden =
      query !== undefined &&
      query.principalId !== principalIdOf(principal) &&
      (await this.permissions.accessFor(principal)).restricted;
    if (!query || hidden)
      throw new LakeServiceError('query_not_found', `No query '${id.slice(0, 64)}' exists in your organization.`);
    return query;
  }

  /**
   * Waits, up to timeoutMs, for a query to end: one held here through its promise, one held by another replica
   * (or none) through its job's events, with a look at its record every few seconds should a notice be lost.
   */
  async waitFor(id: string, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    const live = this.live.get(id);
    if (live && timeoutMs > 0) {
      await this.within(live.done, timeoutMs);
      if (!live.handedOn) return;
    }
    // Held elsewhere, or settled here without ending: another replica claimed it from this one's queue.
    const left = deadline - performance.now();
    if (left > 0) await this.within(this.endedAnywhere(id), left);
  }

  private async within(promise: Promise<void> & { dispose?(): void }, ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
    promise.dispose?.();
  }

  /** Settles when the query's record says it ended (or there is none), seen through its job's events. */
  private endedAnywhere(id: string): Promise<void> & { dispose(): void } {
    let unlisten = (): void => undefined;
    let recheck: NodeJS.Timeout | undefined;
    const ended = new Promise<void>((resolve) => {
      const look = (): void =>
        inBackground(async () => {
          const holder = await this.jobs.holder(id);
          if (!holder || TERMINAL_STATUSES.has(holder.status)) resolve();
        });
      unlisten = this.jobs.onEvent(id, look);
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
    if (this.claimer) return;
    this.claimer = repeat(CLAIM_EVERY_MS, () => this.claimQueued());
  }

  private async claimQueued(): Promise<void> {
    while (this.claimer && this.queue.hasIdleSlot()) {
      // The slot is held while the claim is made, so a query submitted meanwhile cannot take it too.
      this.queue.reserveSlot();
      let claimed: { id: string; organizationId: string; sql: string; plan: QueryPlan | null } | undefined;
      try {
        const id = await this.jobs.claimNext('query', this.workerId, this.jobs.clockNow() + this.jobSettings.leaseMs, {
          heldBy: this.workerId,
          organizations: this.queue.organizationsAtShare(),
        });
        const found = id === undefined ? undefined : await this.store.claimed(id);
        claimed = id === undefined || !found ? undefined : { id, ...found };
      } finally {
        this.queue.releaseSlot();
      }
      if (!claimed) return;
      this.queue.started(claimed.organizationId);
      await this.adopt(claimed);
    }
  }

  /** Runs a query another replica accepted, now claimed (running, under this process's lease). */
  private async adopt(claimed: {
    id: string;
    organizationId: string;
    sql: string;
    plan: QueryPlan | null;
  }): Promise<void> {
    const { id, organizationId, sql, plan } = claimed;
    let job: QueryJob;
    try {
      if (!plan) throw new Error('This query was accepted by an older lake that did not record what it reads.');
      const { statement, explain } = guardSql(sql);
      job = { ...this.jobOf(id, organizationId, statement, plan), ...(explain ? { explain } : {}) };
      mkdirSync(job.resultDir, { recursive: true, mode: 0o700 });
    } catch (error) {
      this.queue.ended(organizationId);
      await this.store.markEnded(
        id,
        'failed',
        { code: 'query_abandoned', message: `${error instanceof Error ? error.message : String(error)} Run it again.` },
        0,
      );
      return;
    }
    const live = this.track(id, organizationId, job);
    await this.begin(live, true);
    this.keepLeases();
  }

  resultPath(query: QueryRecord): string | undefined {
    return query.resultFile ? this.lake.layout.toAbsolute(query.resultFile) : undefined;
  }

  /** Deletes queries and results past retention, and expired idempotency keys. */
  async purgeExpired(now: number = Math.floor(Date.now() / 1000)): Promise<number> {
    const removed = await this.store.purgeCreatedBefore(now - this.settings.retentionSeconds);
    for (const { id } of removed) this.firstPages.drop(id);
    for (const { id, organizationId } of removed)
      rmSync(this.lake.layout.resultDir(organizationId, id), { recursive: true, force: true });
    await this.idempotency.purgeExpired(now);
    return removed.length;
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
      const given = new Set(
        await this.jobs.handBack(
          this.workerId,
          waiting.map((live) => live.id),
        ),
      );
      for (const live of waiting) {
        if (given.has(live.id) && this.queue.remove(live)) {
          this.engine.forget(live.id);
          live.handedOn = true;
          this.untrack(live);
        }
      }
    }
    const all = (): Promise<unknown> => Promise.allSettled([...this.live.values()].map((r) => r.done));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all(), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
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

  /** Settles once the query, if this process holds it, has ended; at once otherwise. */
  async settled(id: string): Promise<void> {
    await this.live.get(id)?.done;
  }

  private track(id: string, organizationId: string, job: QueryJob): LiveQuery {
    let settle = (): void => undefined;
    const done = new Promise<void>((resolve) => (settle = resolve));
    // A cancel asked anywhere (another replica) is an event of the job: look at the durable flag at once, rather
    // than at the next lease renewal.
    const unlisten = this.jobs.onEvent(id, () => inBackground(() => this.stopIfCancelRequested(id)));
    const live: LiveQuery = { id, organizationId, job, done, settle, unlisten };
    this.live.set(id, live);
    return live;
  }

  /**
   * Stops a query held here that someone asked to cancel, or that another process ended meanwhile (cancelled while
   * queued, as a replica claimed it). Not one whose outcome this process is recording: its own ending is an event too.
   */
  private async stopIfCancelRequested(id: string): Promise<void> {
    const live = this.live.get(id);
    if (!live || live.ending) return;
    const asked = (await this.jobs.cancelRequested([id])).length > 0;
    const holder = asked ? undefined : await this.jobs.holder(id);
    if ((asked || !holder || TERMINAL_STATUSES.has(holder.status)) && !live.ending) await this.stop(id, 'cancelled');
  }

  /**
   * A query queued here that another replica claimed (it had a free worker first) is theirs, running or already
   * ended: forget it here, without touching its record or its result. True when that is so.
   */
  private async releaseIfTakenElsewhere(live: LiveQuery): Promise<boolean> {
    if (!(await this.startedElsewhere(live.id))) return false;
    if (this.queue.remove(live)) {
      this.engine.forget(live.id);
      live.handedOn = true;
      this.untrack(live);
    }
    return true;
  }

  /** Whether a query this process has not started was started by another (a query cancelled while queued never was). */
  private async startedElsewhere(id: string): Promise<boolean> {
    const holder = await this.jobs.holder(id);
    if (!holder?.started) return false;
    return holder.status !== 'running' || holder.owner !== this.workerId;
  }

  private untrack(live: LiveQuery): void {
    this.live.delete(live.id);
    live.unlisten();
    live.settle();
    if (this.live.size === 0) this.idle.abort();
  }

  /**
   * Starts a query on the engine; it has a slot (counted in the queue). One recorded queued is claimed first, which
   * fails if it was cancelled meanwhile. False when the store could not be reached: the query waits again, at the
   * back of its organization's queue, for the next chance (a query ending, a submission, the lease loop).
   */
  private async begin(live: LiveQuery, recordedRunning: boolean): Promise<boolean> {
    live.starting = true;
    let claimed: boolean;
    try {
      claimed =
        recordedRunning ||
        (await this.jobs.claim(live.id, this.workerId, this.jobs.clockNow() + this.jobSettings.leaseMs));
    } catch {
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
    // Without the store, the per-result cap alone; the organization's storage was checked when it was accepted.
    live.job.limits = { ...live.job.limits, ...(await this.resultLimit(live.organizationId).catch(() => ({}))) };
    live.running = this.engine.start(live.job);
    live.starting = false;
    if (live.stopWhenStarted) live.running.stop(live.stopWhenStarted);
    void live.running.outcome
      .then(
        (outcome) => this.finish(live, outcome),
        (error: unknown) =>
          this.finish(live, {
            status: 'failed',
            code: 'worker_crashed',
            message: this.cleanMessage(String(error)),
            durationMs: 0,
          }),
      )
      // finish() has already settled the query's waiters; a failed record is found by its lease running out.
      .catch(() => undefined);
    return true;
  }

  private async finish(live: LiveQuery, outcome: QueryOutcome): Promise<void> {
    live.ending = true;
    mark('engine finished');
    const file = join(live.job.resultDir, RESULT_FILE_NAME);
    try {
      if (outcome.status === 'succeeded') {
        await this.store.markSucceeded(live.id, { ...outcome, resultFile: this.lake.layout.toRelative(file) });
        this.firstPages.keep(live.id, outcome.firstRows);
        await this.usage?.record(live.organizationId, 'result_bytes', outcome.resultBytes);
      } else {
        await this.store.markEnded(
          live.id,
          outcome.status,
          { code: outcome.code, message: this.cleanMessage(outcome.message) },
          outcome.durationMs,
        );
        rmSync(file, { force: true });
      }
      // Metered once it has run, whether it succeeded or not.
      await this.usage?.record(live.organizationId, 'queries_run', 1);
      mark('outcome recorded');
    } finally {
      this.queue.ended(live.organizationId);
      this.untrack(live);
      await this.pump();
    }
  }

  /** Starts queued queries while the engine has slots for them. */
  private async pump(): Promise<void> {
    for (let next = this.queue.take(); next; next = this.queue.take()) {
      if (!(await this.begin(next, false))) return;
    }
  }

  /** The job for the engine, and its plan: the catalog version and files it reads (recorded, so none is collected). */
  private async jobFor(
    id: string,
    organizationId: string,
    access: TableAccess,
    statement: string,
  ): Promise<QueryJob & { plan: QueryPlan }> {
    const { file, tables, version } = await this.lake.catalogFile(organizationId, access);
    // A layered snapshot reads files of earlier snapshots too: every folder its files are in.
    const readableDirs = access.restricted
      ? [...new Set(tables.flatMap((t) => t.snapshot.files.map((f) => dirname(this.lake.layout.toAbsolute(f)))))]
      : [this.lake.layout.tablesDir(organizationId)];
    const { layout } = this.lake;
    const plan: QueryPlan = {
      catalogVersion: version,
      catalogFile: layout.toRelative(file),
      readableDirs: readableDirs.map((dir) => layout.toRelative(dir)),
    };
    return { ...this.jobOf(id, organizationId, statement, plan), plan };
  }

  /** The engine's job from a plan: how this process runs a query, whichever replica accepted it. */
  private jobOf(id: string, organizationId: string, statement: string, plan: QueryPlan): QueryJob {
    const { layout } = this.lake;
    return {
      queryId: id,
      statement,
      catalogFile: layout.toAbsolute(plan.catalogFile),
      readableDirs: plan.readableDirs.map((dir) => layout.toAbsolute(dir)),
      resultDir: layout.resultDir(organizationId, id),
      writableDir: layout.resultsDir(organizationId),
      limits: {
        timeoutMs: this.settings.timeoutMs,
        memoryLimit: this.settings.memoryLimit,
        threads: this.settings.threads,
        // Set again when the query starts, from the storage its organization has left then.
        maxResultBytes: this.settings.maxResultBytes,
        resultLimitCode: 'result_too_large',
      },
    };
  }

  /** The bytes a result may take: the per-result cap, or what is left of the organization's storage if less. */
  private async resultLimit(
    organizationId: string,
  ): Promise<Pick<QueryJob['limits'], 'maxResultBytes' | 'resultLimitCode'>> {
    const left = Math.max(0, this.settings.orgResultStorageBytes - (await this.store.resultBytesKept(organizationId)));
    return left < this.settings.maxResultBytes
      ? { maxResultBytes: left, resultLimitCode: 'result_storage_full' }
      : { maxResultBytes: this.settings.maxResultBytes, resultLimitCode: 'result_too_large' };
  }

  private async assertResultStorageLeft(organizationId: string): Promise<void> {
    const kept = await this.store.resultBytesKept(organizationId);
    if (kept < this.settings.orgResultStorageBytes) return;
    const mb = (bytes: number): string => `${Math.round(bytes / 2 ** 20).toLocaleString('en-US')} MB`;
    throw new LakeServiceError(
      'result_storage_full',
      `Your organization keeps ${mb(kept)} of query results, its limit is ${mb(this.settings.orgResultStorageBytes)}. Results are removed ${this.settings.retentionSeconds / 3600} h after their query; try again when older ones have gone.`,
    );
  }

  /**
   * Records the query, queued or running, under the write lock, together with what must be decided atomically: a
   * replay of the same Idempotency-Key (exactly one query per key) and the organization's in-flight ceiling.
   */
  private async record(
    principal: Principal,
    scope: IdempotencyScope,
    key: string | undefined,
    requestHash: string,
    query: { id: string; sql: string; plan: QueryPlan },
    startsNow: (organizationId: string) => boolean,
  ): Promise<SubmitOutcome> {
    const locks = [
      lock.queryAdmission(principal.organizationId),
      ...(key ? [lock.idempotencyKey(scope.organizationId, scope.principalId, key)] : []),
    ];
    return this.db.transaction(locks, async () => {
      const replayed = key ? await this.replay(scope, key, requestHash) : undefined;
      if (replayed) return replayed;
      if ((await this.store.countLive(principal.organizationId)) >= this.settings.maxInFlight) {
        throw new LakeServiceError(
          'too_many_queries',
          `Your organization already has ${this.settings.maxInFlight} queries queued or running. Wait for one to finish.`,
          { retryAfterSeconds: 1 },
        );
      }
      // Queued work holds a lease too: if this process dies, its queue is failed like its running queries.
      const lease = { owner: this.workerId, expiresMs: this.jobs.clockNow() + this.jobSettings.leaseMs };
      const status = startsNow(principal.organizationId) ? 'running' : 'queued';
      const record = await this.store.insert({
        ...query,
        organizationId: principal.organizationId,
        principalId: scope.principalId,
        credentialId: principal.credentialId,
        lease,
        status,
      });
      if (key)
        await this.idempotency.save(scope, key, {
          requestHash,
          resourceId: query.id,
          response: { status: record.status },
        });
      return { query: record, replayed: false };
    });
  }

  /**
   * While queries are held here: renew their leases (so no one takes them for lost), stop any that someone asked
   * to cancel, from this process or another, through the job's durable cancel flag, and drop queued ones that
   * another process cancelled.
   */
  private keepLeases(): void {
    if (this.renewing) return;
    this.renewing = true;
    this.idle = new AbortController();
    const idle = this.idle.signal;
    // On the jobs' clock, like the lease deadlines themselves; ends when nothing is held here any more.
    const every = Math.min(1000, this.jobSettings.leaseMs / 3);
    void (async () => {
      while (this.live.size > 0) {
        await this.jobs.clock.sleep(every, idle);
        if (idle.aborted) break;
        // The store unreachable (PostgreSQL restarting): the next round tries again, within the lease.
        await this.leaseRound().catch(() => undefined);
      }
      this.renewing = false;
      // A query that arrived while this loop was ending needs a loop of its own.
      if (this.live.size > 0) this.keepLeases();
    })();
  }

  private async leaseRound(): Promise<void> {
    const ids = [...this.live.keys()];
    await this.jobs.renewLeases(this.workerId, ids, this.jobs.clockNow() + this.jobSettings.leaseMs);
    for (const id of await this.jobs.cancelRequested(ids)) await this.stop(id, 'cancelled');
    // Queued here: each look at the store is a wait, during which the query may start here (then it is left be).
    const queuedHere = (live: LiveQuery): boolean => !live.starting && !live.running;
    for (const live of [...this.live.values()]) {
      if (!queuedHere(live) || (await this.jobs.holder(live.id))?.status === 'queued') continue;
      // Claimed by another replica (released here), or ended while it waited (cancelled).
      if (!(await this.releaseIfTakenElsewhere(live)) && queuedHere(live)) await this.stop(live.id, 'cancelled');
    }
    // A query that could not start while the store was unreachable starts now, if a worker is free.
    await this.pump();
  }

  private async replay(scope: IdempotencyScope, key: string, requestHash: string): Promise<SubmitOutcome | undefined> {
    const found = await this.idempotency.replay(scope, key, requestHash);
    if (!found) return undefined;
    const query = await this.store.get(scope.organizationId, found.resourceId);
    if (!query) return undefined;
    // The first answer was the query as it stood then: queued or running, no outcome yet.
    const answered = (found.response as { status?: QueryRecord['status'] } | undefined)?.status ?? query.status;
    return {
      query: { ...query, status: answered, durationMs: null, errorCode: null, errorMessage: null },
      replayed: true,
    };
  }

  /**
   * Refuses SQL the principal could not run as a query (its guard, its introspection rule, its table grants), with
   * the query's own codes: for what is saved to run later as that principal, or shown to it.
   */
  async assertMayRead(principal: Principal, sql: string): Promise<void> {
    const { statement, tokens } = guardSql(sql);
    const access = await this.permissions.accessFor(principal);
    if (!access.restricted) return;
    assertNoIntrospection(tokens);
    const job = await this.jobFor(newId('qr'), principal.organizationId, access, statement);
    let references: readonly TableReference[];
    try {
      references = await this.engine.inspect(job);
    } catch (error) {
      if (error instanceof LakeServiceError) throw error;
      throw new LakeServiceError(
        'parameter_invalid',
        `The SQL does not parse: ${this.cleanMessage(error instanceof Error ? error.message : String(error))}`,
        { param: 'sql' },
      );
    } finally {
      this.engine.forget(job.queryId);
    }
    await this.assertReadable(principal.organizationId, access, references);
  }

  /** Whether the principal may read what the SQL names (see assertMayRead). */
  async mayRead(principal: Principal, sql: string): Promise<boolean> {
    return this.assertMayRead(principal, sql).then(
      () => true,
      () => false,
    );
  }

  /**
   * Every table or view a restricted query names must be one it may read, directly or (for views) through every
   * table underneath. The refusal names what the query named, never a hidden table underneath a view, and reads
   * the same whether the name is hidden or does not exist.
   */
  private async assertReadable(
    organizationId: string,
    access: TableAccess,
    references: readonly TableReference[],
  ): Promise<void> {
    const { tables, views } = await this.lake.visible(organizationId, access);
    const visible = new Set([...tables, ...views].map((o) => `${o.schema.toLowerCase()}\u0000${o.name.toLowerCase()}`));
    for (const ref of references) {
      const inLake = ref.catalog === '' || ref.catalog.toLowerCase() === 'lake';
      if (inLake && ref.schema !== '' && visible.has(`${ref.schema.toLowerCase()}\u0000${ref.table.toLowerCase()}`))
        continue;
      const written = [ref.catalog, ref.schema, ref.table].filter(Boolean).join('.');
      throw new LakeServiceError(
        'grant_table_denied',
        `This credential may not read ${written}. Ask an owner for a grant (lake admin grant).`,
      );
    }
  }

  /** Engine messages help, but must not show where the lake lives on disk. */
  private cleanMessage(message: string): string {
    return message.split(this.lake.layout.homeRoot).join('<lake>').trim();
  }
}
