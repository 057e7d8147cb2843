import type { Principal } from '../auth/principal.js';
import type { PermissionStore } from '../auth/permissions.js';
import { principalIdOf } from '../auth/ownership.js';
import type { Clock } from '../core/clock.js';
import { LakeServiceError } from '../core/errors.js';
import { HIDDEN_REASON } from '../sources/source-access.js';
import type { JobRuntime } from './job-runtime.js';
import {
  TERMINAL_STATUSES,
  type JobEvent,
  type JobFilter,
  type JobKind,
  type JobRecord,
  type JobStore,
} from './job-store.js';

/** How long a cancel waits for a job it stopped in this process to end, to answer with the final status. */
const CANCEL_SETTLE_MS = 250;

/** How long a sync cancel waits for the sync to end, wherever it runs, before answering (it goes on ending after). */
const SYNC_SETTLE_MS = 2_000;

export interface CancelOutcome {
  job: JobRecord;
  /** True while the engine may still finish work it had already admitted. */
  executionMayContinue: boolean;
}

/** How a caller sees one event of a job's stream; undefined leaves it out. */
export type EventView = (type: string, data: Record<string, unknown>) => Promise<Record<string, unknown> | undefined>;

/** Where a stream of a job's events starts, and how the caller sees them. */
export interface EventFeed {
  jobId: string;
  afterSeq: number;
  /** The SSE id of an event, from its number within the job. */
  idOf(seq: number): string;
  view: EventView;
  /**
   * How the caller sees the stream now, checked again as when it was opened (a caller who may no longer see the
   * job or source is refused with the same error): a long stream keeps to its caller's grants as they change.
   */
  viewAs(principal: Principal): Promise<EventView>;
}

/**
 * Jobs as a caller may see them: their organization's, and only their own while table permissions restrict them
 * (another's job could show hidden tables through its query). Unknown and hidden ids are alike: 404. A failure
 * that names tables is told to a restricted caller without the names.
 */
export class JobService {
  private lastSweep = 0;
  /** How each kind's events are seen by a caller, where a kind's events name what not everyone may see. */
  private readonly eventViews = new Map<JobKind, (principal: Principal, id: string) => Promise<EventView>>();

  constructor(
    private readonly store: JobStore,
    private readonly runtime: JobRuntime,
    private readonly permissions: PermissionStore,
    private readonly clock: Clock,
  ) {}

  /** Registers how a caller sees the events of a kind's jobs (syncs: only the tables it may read). */
  viewEventsOf(kind: JobKind, view: (principal: Principal, id: string) => Promise<EventView>): void {
    this.eventViews.set(kind, view);
  }

  async get(principal: Principal, id: string): Promise<JobRecord> {
    await this.store.expireLeases(id);
    const job = await this.store.get(principal.organizationId, id);
    if (!job || !(await this.canSee(principal, job)))
      throw new LakeServiceError('job_not_found', `No job '${id.slice(0, 64)}' exists in your organization.`);
    return this.seen(principal, job);
  }

  async list(
    principal: Principal,
    limit: number,
    startingAfter: string | undefined,
    filter: JobFilter = {},
  ): Promise<{ data: JobRecord[]; hasMore: boolean }> {
    await this.sweep();
    let after: JobRecord | undefined;
    if (startingAfter !== undefined) {
      after = await this.store.get(principal.organizationId, startingAfter);
      if (!after || !(await this.canSee(principal, after))) {
        throw new LakeServiceError(
          'invalid_cursor',
          'starting_after is not a next_cursor from a previous page of your jobs.',
          { param: 'starting_after' },
        );
      }
    }
    const page = await this.store.list(principal.organizationId, limit, after, await this.ownOnly(principal), filter);
    return { ...page, data: await Promise.all(page.data.map((job) => this.seen(principal, job))) };
  }

  /**
   * Queued work is cancelled at once, in any process. Running work is asked to stop through the job's durable flag,
   * which reaches the process running it at once (a job event); a job stopped in this process is given a moment to
   * end, and a sync, wherever it runs, a little longer, so the answer usually carries the final state.
   */
  async cancel(principal: Principal, id: string): Promise<CancelOutcome> {
    const job = await this.get(principal, id);
    if (job.status === 'cancelled') return { job, executionMayContinue: false };
    if (TERMINAL_STATUSES.has(job.status)) {
      throw new LakeServiceError('job_not_cancellable', `Job ${id} already ${job.status}; there is nothing to cancel.`);
    }
    if (job.status === 'queued') {
      // Atomic: once finished here it can never be claimed, in any process; one holding it in its queue drops it.
      await this.store.finish(id, 'cancelled', { code: 'cancelled', message: 'Cancelled before it started.' });
    } else {
      await this.store.requestCancel(id);
      if (job.kind === 'sync') await this.settle(id, SYNC_SETTLE_MS);
      else await Promise.race([this.runtime.released(id), this.clock.sleep(CANCEL_SETTLE_MS)]);
    }
    const after = (await this.store.getById(id)) as JobRecord;
    return { job: await this.seen(principal, after), executionMayContinue: after.status === 'running' };
  }

  /**
   * Where a caller's stream of a job's events starts: after the event a Last-Event-ID (the event's number) names,
   * refused when it is not one of the job's; null when the job has ended with nothing after it (204: stop).
   */
  async openStream(principal: Principal, id: string, lastEventId: string | undefined): Promise<EventFeed | null> {
    const job = await this.get(principal, id);
    let afterSeq = 0;
    if (lastEventId !== undefined) {
      const value = lastEventId.trim();
      if (!/^\d{1,15}$/.test(value) || Number(value) > (await this.store.lastSeq(id))) {
        throw new LakeServiceError(
          'invalid_last_event_id',
          `Last-Event-ID '${value.slice(0, 32)}' is not an event id of this job's stream.`,
          { param: 'Last-Event-ID' },
        );
      }
      afterSeq = Number(value);
    }
    const viewOf = async (caller: Principal): Promise<EventView> =>
      (await this.eventViews.get(job.kind)?.(caller, id)) ?? (async (_type, data) => data);
    // The opening caller was just checked (get, above); a later one is checked again.
    const viewAs = async (caller: Principal): Promise<EventView> => {
      await this.get(caller, id);
      return viewOf(caller);
    };
    return { jobId: id, afterSeq, idOf: String, view: await viewOf(principal), viewAs };
  }

  /** True when a job has ended and has no event after `afterSeq`: a stream of it would have nothing to say. */
  async endedBefore(jobId: string, afterSeq: number): Promise<boolean> {
    const job = await this.store.getById(jobId);
    return job !== undefined && TERMINAL_STATUSES.has(job.status) && (await this.store.lastSeq(jobId)) <= afterSeq;
  }

  /** A job's events after `afterSeq`, in order (for a stream whose feed was opened with openStream). */
  events(jobId: string, afterSeq: number): Promise<JobEvent[]> {
    return this.store.events(jobId, afterSeq);
  }

  /** Calls listener when the job has a new event, from any process sharing the store; returns the unsubscribe. */
  onEvent(jobId: string, listener: () => void): () => void {
    return this.store.onEvent(jobId, listener);
  }

  /** Fails jobs of dead processes: on every list at most every few seconds, and by lake serve in the background. */
  async sweep(force = false): Promise<number> {
    const now = this.clock.now();
    if (!force && now - this.lastSweep < 5000) return 0;
    this.lastSweep = now;
    return this.store.expireLeases();
  }

  /** Waits up to `ms` for a job to leave running. */
  private async settle(id: string, ms: number): Promise<void> {
    for (let waited = 0; waited < ms; waited += 100) {
      if ((await this.store.getById(id))?.status !== 'running') return;
      await this.clock.sleep(100);
    }
  }

  /** The job as the caller may see it: a restricted credential is not told which tables a sync failed on. */
  private async seen(principal: Principal, job: JobRecord): Promise<JobRecord> {
    if (job.errorCode !== 'tables_failed' || !(await this.permissions.accessFor(principal)).restricted) return job;
    return { ...job, errorMessage: HIDDEN_REASON };
  }

  private async ownOnly(principal: Principal): Promise<string | undefined> {
    return (await this.permissions.accessFor(principal)).restricted ? principalIdOf(principal) : undefined;
  }

  private async canSee(principal: Principal, job: JobRecord): Promise<boolean> {
    const own = await this.ownOnly(principal);
    return own === undefined || job.principalId === own;
  }
}
