import type { Principal } from '../auth/principal.js';
import type { PermissionStore } from '../auth/permissions.js';
import type { Clock } from '../core/clock.js';
import { LakeServiceError } from '../core/errors.js';
import type { QueryService } from '../queries/query-service.js';
import { principalIdOf } from '../auth/ownership.js';
import type { QueryRecord } from '../queries/store.js';
import { TERMINAL_STATUSES, type JobRecord, type JobStore } from './job-store.js';

/** How long a cancel waits for a query it stopped in this process to end, to answer with the final status. */
const CANCEL_SETTLE_MS = 250;

/** How long a sync cancel waits for the sync to end before answering (it goes on ending after). */
const SYNC_SETTLE_MS = 2_000;

export interface CancelOutcome {
  job: JobRecord;
  /** True while the engine may still finish work it had already admitted. */
  executionMayContinue: boolean;
}

/**
 * Jobs as a caller may see them: their organization's, and only their own while table permissions restrict them
 * (another's job could show hidden tables through its query). Unknown and hidden ids are alike: 404.
 */
export class JobService {
  private lastSweep = 0;

  constructor(
    readonly store: JobStore,
    private readonly queries: QueryService,
    private readonly permissions: PermissionStore,
    private readonly clock: Clock,
  ) {}

  async get(principal: Principal, id: string): Promise<JobRecord> {
    await this.store.expireLeases(id);
    const job = await this.store.get(principal.organizationId, id);
    if (!job || !(await this.canSee(principal, job)))
      throw new LakeServiceError('job_not_found', `No job '${id.slice(0, 64)}' exists in your organization.`);
    return job;
  }

  async list(
    principal: Principal,
    limit: number,
    startingAfter: string | undefined,
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
    return this.store.list(principal.organizationId, limit, after, await this.ownOnly(principal));
  }

  /**
   * Queued work is cancelled at once. Running work is asked to stop through the job's durable flag (its process
   * checks every second); a query running in this process is interrupted now and given a moment to end.
   */
  async cancel(principal: Principal, id: string): Promise<CancelOutcome> {
    const job = await this.get(principal, id);
    if (job.status === 'cancelled') return { job, executionMayContinue: false };
    if (TERMINAL_STATUSES.has(job.status)) {
      throw new LakeServiceError('job_not_cancellable', `Job ${id} already ${job.status}; there is nothing to cancel.`);
    }
    if (job.status === 'queued') {
      // Atomic: once finished here it can never be claimed, in any process. This process also drops it from its queue.
      await this.store.finish(id, 'cancelled', { code: 'cancelled', message: 'Cancelled before it started.' });
      if (job.kind === 'query') await this.queries.stop(id, 'cancelled');
    } else {
      await this.store.requestCancel(id);
      if (job.kind === 'query' && (await this.queries.stop(id, 'cancelled'))) {
        await Promise.race([this.queries.settled(id), this.clock.sleep(CANCEL_SETTLE_MS)]);
      }
      // A sync's connections are ended at once wherever it runs (the cancel reaches its replica as a job event):
      // a moment's wait usually answers with the final state rather than "may continue".
      if (job.kind === 'sync') await this.settle(id, SYNC_SETTLE_MS);
    }
    const after = (await this.store.getById(id)) as JobRecord;
    return { job: after, executionMayContinue: after.status === 'running' };
  }

  /** Waits up to `ms` for a job to leave running. */
  private async settle(id: string, ms: number): Promise<void> {
    for (let waited = 0; waited < ms; waited += 100) {
      if ((await this.store.getById(id))?.status !== 'running') return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The query behind a succeeded query job, for freshly signed result links. */
  async result(principal: Principal, id: string): Promise<QueryRecord> {
    const job = await this.get(principal, id);
    if (job.status === 'queued' || job.status === 'running')
      throw new LakeServiceError('job_not_finished', `Job ${id} is ${job.status}; its result is not ready.`);
    if (job.kind !== 'query' || job.status !== 'succeeded') {
      throw new LakeServiceError(
        'job_has_no_result',
        `Job ${id} ${job.kind === 'query' ? job.status : `is a ${job.kind}`}; only succeeded queries have a result.`,
      );
    }
    return this.queries.get(principal, id);
  }

  /** Fails jobs of dead processes: on every list at most every few seconds, and by lake serve in the background. */
  async sweep(force = false): Promise<number> {
    const now = this.clock.now();
    if (!force && now - this.lastSweep < 5000) return 0;
    this.lastSweep = now;
    return this.store.expireLeases();
  }

  private async ownOnly(principal: Principal): Promise<string | undefined> {
    return (await this.permissions.accessFor(principal)).restricted ? principalIdOf(principal) : undefined;
  }

  private async canSee(principal: Principal, job: JobRecord): Promise<boolean> {
    const own = await this.ownOnly(principal);
    return own === undefined || job.principalId === own;
  }
}
