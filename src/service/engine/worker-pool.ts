import { NO_METRICS, type LakeMetrics } from '../metrics/metrics.js';
import { join } from 'node:path';
import { LakeServiceError, isErrorCode, programmingErrorFrom } from '../core/errors.js';
import { parseByteSize, WORKER_BASE_BYTES, type WorkerPoolSettings } from './worker-settings.js';
import type {
  QueryEngine,
  QueryEvents,
  QueryFailureCode,
  QueryJob,
  QueryOutcome,
  RunningQuery,
  StopReason,
} from './query-engine.js';
import { RESULT_FILE_NAME, resultLimitFailure, resultSize, SERVER_DISK_FULL } from './query-runner.js';
import type { TableReference } from './table-refs.js';
import { MemoryCgroup } from './memory-cgroup.js';
import { WorkerProcess, type WorkerExit } from './worker-process.js';

/** How often a running worker's memory and result file are measured. */
const WATCH_EVERY_MS = 50;
/** A statement's parse (inspect) that takes longer than this is refused, and its worker replaced. */
const INSPECT_TIMEOUT_MS = 5000;
/** A worker that dies before it is ready is replaced after this pause, so a broken installation cannot spin. */
const RESPAWN_PAUSE_MS = 1000;
/** A query that finds no ready worker for this long fails: none can be started (a broken installation, say). */
const WORKER_WAIT_MS = 30_000;

/**
 * `lake serve`'s query engine: worker processes, each running one query at a time, so no query SQL touches DuckDB
 * in the server process. The server keeps what a query cannot undo from inside: a hard memory limit (a memory
 * cgroup where the system has one, and always a watchdog on resident memory), a hard deadline (the time limit,
 * then a grace after DuckDB's own interrupt, then SIGKILL), and the result-size cap. A worker that crashes, is
 * killed or grows too much fails only its own query and is replaced; the rest of the server never notices.
 */
export class WorkerPool implements QueryEngine {
  readonly slots: number;
  private readonly idle: WorkerProcess[] = [];
  private readonly waiting: ((worker: WorkerProcess) => void)[] = [];
  private readonly workers = new Set<WorkerProcess>();
  private inspector: WorkerProcess | undefined;
  private inspections: Promise<unknown> = Promise.resolve();
  private nextInspection = 0;
  private closing = false;
  /** When a worker last became ready, and when one last died before it did (readiness compares the two). */
  private lastReadyAt: number | undefined;
  private lastFailedStartAt: number | undefined;

  constructor(
    private readonly settings: WorkerPoolSettings,
    private readonly limits: { memoryLimit: string; threads: number },
    /** Workers lost, by why: counted for Prometheus. */
    private readonly metrics: LakeMetrics = NO_METRICS,
  ) {
    this.slots = settings.workers;
    if (settings.memoryCgroups) MemoryCgroup.removeStale();
  }

  private get hardLimitBytes(): number {
    return parseByteSize(this.limits.memoryLimit) + WORKER_BASE_BYTES;
  }

  /** Workers running a query, and ready for one (for metrics). */
  stats(): { busy: number; idle: number } {
    return { busy: Math.max(0, this.workers.size - this.idle.length), idle: this.idle.length };
  }

  unableToStart(): string | undefined {
    if (this.idle.length > 0) return undefined;
    if (this.lastFailedStartAt !== undefined && (this.lastReadyAt ?? 0) <= this.lastFailedStartAt)
      return 'query workers fail to start (see the server log and the installation: dist/query-worker.js)';
    if (this.lastReadyAt === undefined) return 'query workers are starting';
    // Every worker is busy or being replaced: a query waits its turn in the queue, which is not unreadiness.
    return undefined;
  }

  warm(): void {
    while (this.workers.size < this.slots) this.spawn();
    this.inspector ??= this.spawnInspector();
  }

  /** Parse-only checks, in a worker of their own, one at a time: they take milliseconds and never wait for a query. */
  inspect(job: QueryJob): Promise<TableReference[]> {
    return this.parse(job.statement);
  }

  parse(statement: string): Promise<TableReference[]> {
    const result = this.inspections.then(() => this.inspectNow(statement));
    // The chain only orders inspections; each caller gets its own failure through `result`.
    this.inspections = result.catch(() => undefined);
    return result;
  }

  private async inspectNow(statement: string): Promise<TableReference[]> {
    if (!this.inspector?.alive) this.inspector = this.spawnInspector();
    const worker = this.inspector;
    const requestId = ++this.nextInspection;
    try {
      await worker.ready;
    } catch {
      this.inspector = undefined;
      throw uncheckable();
    }
    return new Promise<TableReference[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        done();
        worker.kill();
        reject(uncheckable());
      }, INSPECT_TIMEOUT_MS);
      const done = (): void => {
        clearTimeout(timer);
        worker.onMessage(undefined);
        worker.onExit(undefined);
      };
      worker.onMessage((message) => {
        if (message.type !== 'inspected' || message.requestId !== requestId) return;
        done();
        if (message.references) resolve(message.references);
        else if (message.refusal && isErrorCode(message.refusal.code)) {
          const { code, message: text, param } = message.refusal;
          reject(new LakeServiceError(code, text, param ? { param } : {}));
        } else if (message.internalError !== undefined)
          // Said as lake's own error where it is caught (a 500 and the server's log), as in process.
          reject(programmingErrorFrom(message.internalError));
        else reject(new Error(message.error ?? 'The statement could not be parsed.'));
      });
      worker.onExit(() => {
        done();
        if (this.inspector === worker) this.inspector = undefined;
        reject(uncheckable());
      });
      worker.send({ type: 'inspect', requestId, statement });
    });
  }

  start(job: QueryJob, events: QueryEvents = {}): RunningQuery {
    let stopRequested: StopReason | undefined;
    let stopNow: ((reason: StopReason) => void) | undefined;
    const outcome = this.acquire(WORKER_WAIT_MS).then((worker) => {
      if (!worker) {
        const message =
          'No query worker could be started for this query. Check the server log and the installation (dist/query-worker.js).';
        return { status: 'failed', code: 'worker_crashed', message, durationMs: 0 } satisfies QueryOutcome;
      }
      const supervised = this.supervise(worker, job, events);
      stopNow = supervised.stop;
      if (stopRequested) supervised.stop(stopRequested);
      return supervised.outcome;
    });
    return {
      outcome,
      stop(reason) {
        stopRequested ??= reason;
        stopNow?.(reason);
      },
    };
  }

  forget(): void {
    // Inspection keeps nothing for later.
  }

  async close(): Promise<void> {
    this.closing = true;
    const all = [...this.workers, ...(this.inspector ? [this.inspector] : [])];
    for (const worker of all) worker.kill();
    await Promise.all(all.map((w) => w.exited));
    // Their memory cgroups are removable a moment after they exit; this process may not be there to retry later.
    await Promise.all(all.map((w) => w.removeCgroup()));
  }

  /**
   * A ready, idle worker, or undefined when none is ready within waitMs; the caller (the query scheduler) never
   * asks for more than `slots` at once, so a wait is only for a worker being started or replaced.
   */
  private acquire(waitMs: number): Promise<WorkerProcess | undefined> {
    this.warm();
    // The worker idle longest: its next engine instance has had the most time to be made.
    const worker = this.idle.shift();
    if (worker) return Promise.resolve(worker);
    return new Promise((resolve) => {
      const take = (ready: WorkerProcess): void => {
        clearTimeout(timer);
        resolve(ready);
      };
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(take);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve(undefined);
      }, waitMs);
      this.waiting.push(take);
    });
  }

  private release(worker: WorkerProcess): void {
    const grown = worker.rssBytes() - worker.baseRssBytes;
    if (worker.queriesRun >= this.settings.recycleAfterQueries || grown > this.settings.recycleGrowthBytes) {
      // Replaced, not reused: DuckDB and V8 keep some of what a query allocated; a fresh process starts clean.
      worker.kill();
      return;
    }
    const next = this.waiting.shift();
    if (next) next(worker);
    else this.idle.push(worker);
  }

  private spawn(): void {
    const worker = new WorkerProcess(this.hardLimitBytes, this.limits, this.settings.memoryCgroups);
    this.workers.add(worker);
    const started = Date.now();
    worker.ready.then(
      () => {
        this.lastReadyAt = Date.now();
        this.release(worker);
      },
      () => {
        this.lastFailedStartAt = Date.now();
      },
    );
    void worker.exited.then(() => {
      this.workers.delete(worker);
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      if (this.closing) return;
      const pause = Date.now() - started < RESPAWN_PAUSE_MS ? RESPAWN_PAUSE_MS : 0;
      setTimeout(() => {
        if (!this.closing && this.workers.size < this.slots) this.spawn();
      }, pause).unref();
    });
  }

  private spawnInspector(): WorkerProcess {
    return new WorkerProcess(this.hardLimitBytes, { memoryLimit: '256MB', threads: 1 }, this.settings.memoryCgroups);
  }

  /** Runs one job on one worker and watches it until it ends, one way or another. */
  private supervise(
    worker: WorkerProcess,
    job: QueryJob,
    events: QueryEvents,
  ): { outcome: Promise<QueryOutcome>; stop(reason: StopReason): void } {
    const grace = this.settings.killGraceMs;
    const resultFile = join(job.resultDir, RESULT_FILE_NAME);
    let killedFor: QueryFailureCode | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    let executingAt: number | undefined;
    let ended = false;
    const killFor = (code: QueryFailureCode): void => {
      killedFor ??= code;
      worker.kill();
    };
    // After an interrupt, DuckDB gets the grace to stop by itself; work it cannot interrupt is ended by SIGKILL.
    const interrupt = (reason: StopReason | 'result_limit', code: QueryFailureCode): void => {
      worker.send({ type: 'stop', queryId: job.queryId, reason });
      graceTimer ??= setTimeout(() => killFor(code), grace);
    };
    const deadline = setTimeout(() => killFor('query_timeout'), job.limits.timeoutMs + grace);
    const watch = setInterval(() => {
      if (worker.rssBytes() > worker.hardLimitBytes) killFor('query_memory_limit');
      else if (resultSize(resultFile) > job.limits.maxResultBytes)
        interrupt('result_limit', job.limits.resultLimitCode);
    }, WATCH_EVERY_MS);

    const outcome = new Promise<QueryOutcome>((resolve) => {
      const finish = (value: QueryOutcome, reusable: boolean): void => {
        ended = true;
        clearTimeout(deadline);
        clearTimeout(graceTimer);
        clearInterval(watch);
        worker.onMessage(undefined);
        worker.onExit(undefined);
        worker.queriesRun++;
        if (reusable) this.release(worker);
        resolve(value);
      };
      worker.onMessage((message) => {
        if (message.type === 'executing' && message.queryId === job.queryId) {
          executingAt = performance.now();
          events.executing?.();
        } else if (message.type === 'outcome' && message.queryId === job.queryId)
          finish(message.outcome, killedFor === undefined);
      });
      worker.onExit((exit) => {
        const durationMs = executingAt === undefined ? 0 : performance.now() - executingAt;
        finish(this.lostWorkerOutcome(job, killedFor, exit, durationMs), false);
      });
      if (worker.alive) worker.send({ type: 'run', job });
      else finish(this.lostWorkerOutcome(job, undefined, { code: null, signal: null, outOfMemory: false }, 0), false);
    });
    return {
      outcome,
      // Once it has ended, its worker may be running another query: a late stop must not touch it.
      stop: (reason) => {
        if (!ended) interrupt(reason, reason === 'cancelled' ? 'cancelled' : 'query_abandoned');
      },
    };
  }

  /** What a query whose worker died became: the limit that killed it, or a crash. */
  private lostWorkerOutcome(
    job: QueryJob,
    killedFor: QueryFailureCode | undefined,
    exit: WorkerExit,
    durationMs: number,
  ): QueryOutcome {
    const code: QueryFailureCode = exit.outOfMemory ? 'query_memory_limit' : (killedFor ?? 'worker_crashed');
    this.metrics.workerLost(code);
    const memory = `${this.limits.memoryLimit} (plus ${WORKER_BASE_BYTES / 2 ** 20} MB for the worker itself)`;
    const messages: Record<QueryFailureCode, string> = {
      query_memory_limit: `The query used more than its memory limit of ${memory} and was stopped. Select or aggregate less at once.`,
      query_timeout: `The query ran longer than the ${job.limits.timeoutMs / 1000} s limit, did not stop when interrupted, and was ended.`,
      cancelled: 'The query was cancelled on request.',
      query_abandoned: 'The lake process running this query stopped before it finished. Run it again.',
      result_too_large: resultLimitFailure('result_too_large', job.limits.maxResultBytes)[1],
      result_storage_full: resultLimitFailure('result_storage_full', job.limits.maxResultBytes)[1],
      server_disk_full: SERVER_DISK_FULL,
      worker_crashed: `The process running the query stopped unexpectedly (${exit.signal ?? `exit code ${exit.code}`}). The query may have hit a bug in the engine; other queries are not affected.`,
      query_failed: 'The query failed.',
      write_not_allowed: 'Only read-only SELECT statements run.',
    };
    return { status: code === 'cancelled' ? 'cancelled' : 'failed', code, message: messages[code], durationMs };
  }
}

function uncheckable(): LakeServiceError {
  return new LakeServiceError(
    'parameter_invalid',
    'The SQL could not be checked: parsing it took too long or failed. Simplify the statement.',
    { param: 'sql' },
  );
}
