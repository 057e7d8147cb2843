import type { Principal } from '../auth/principal.js';
import { LakeServiceError } from '../core/errors.js';
import { lock } from '../store/metadata-db.js';
import type { IdempotencyScope, IdempotencyStore } from '../idempotency/idempotency.js';
import type { JobRuntime } from '../jobs/job-runtime.js';
import type { MetadataDb } from '../store/metadata-db.js';
import type { QuerySettings } from './settings.js';
import type { QueryStore } from './store.js';
import type { QueryPlan, QueryRecord } from './store.js';
import { groupDigits } from '../../support/group-digits.js';

export interface SubmitOutcome {
  /** The query; for a replayed Idempotency-Key, as the first submission answered it (its status then). */
  query: QueryRecord;
  replayed: boolean;
}

/** A submission as recorded: with the bytes of results the organization keeps, read in the same transaction. */
export type RecordedSubmission = SubmitOutcome & { resultBytesKept?: number };

/** What admission reads and writes. */
export interface AdmissionParts {
  db: MetadataDb;
  store: QueryStore;
  settings: QuerySettings;
  idempotency: IdempotencyStore;
  runtime: JobRuntime;
}

/**
 * What must be decided atomically as a query is accepted: a replay of the same Idempotency-Key (exactly one query
 * per key), the organization's in-flight ceiling and result storage, and the record itself.
 */
export class QueryAdmission {
  constructor(private readonly parts: AdmissionParts) {}

  /** Refuses a query when the organization's kept results (`kept` bytes) have reached its storage. */
  private assertResultStorageLeft(kept: number): void {
    if (kept < this.parts.settings.orgResultStorageBytes) return;
    const mb = (bytes: number): string => `${groupDigits(Math.round(bytes / 2 ** 20))} MB`;
    throw new LakeServiceError(
      'result_storage_full',
      `Your organization keeps ${mb(kept)} of query results, its limit is ${mb(this.parts.settings.orgResultStorageBytes)}. Results are removed ${this.parts.settings.retentionSeconds / 3600} h after their query; try again when older ones have gone.`,
    );
  }

  /**
   * Records the query, queued or running, under the write lock, together with what must be decided atomically: a
   * replay of the same Idempotency-Key (exactly one query per key), the organization's in-flight ceiling and its
   * result storage. Also answers the bytes of results the organization keeps (read here, not before: on PostgreSQL
   * the two reads go in one round trip with the transaction's locks).
   */
  async record(
    principal: Principal,
    scope: IdempotencyScope,
    key: string | undefined,
    requestHash: string,
    query: { id: string; sql: string; plan: QueryPlan; tags?: readonly string[] },
    startsNow: (organizationId: string) => boolean,
  ): Promise<RecordedSubmission> {
    const locks = [
      lock.queryAdmission(principal.organizationId),
      ...(key ? [lock.idempotencyKey(scope.organizationId, scope.principalId, key)] : []),
    ];
    return this.parts.db.transaction(locks, async () => {
      const replayed = key ? await this.replay(scope, key, requestHash) : undefined;
      if (replayed) return replayed;
      const [live, resultBytesKept] = await Promise.all([
        this.parts.store.countLive(principal.organizationId),
        this.parts.store.resultBytesKept(principal.organizationId),
      ]);
      this.assertResultStorageLeft(resultBytesKept);
      if (live >= this.parts.settings.maxInFlight) {
        throw new LakeServiceError(
          'too_many_queries',
          `Your organization already has ${this.parts.settings.maxInFlight} queries queued or running. Wait for one to finish.`,
          { retryAfterSeconds: 1 },
        );
      }
      // Queued work holds a lease too: if this process dies, its queue is failed like its running queries.
      const lease = this.parts.runtime.lease();
      const status = startsNow(principal.organizationId) ? 'running' : 'queued';
      const record = await this.parts.store.insert({
        ...query,
        organizationId: principal.organizationId,
        principalId: scope.principalId,
        credentialId: principal.credentialId,
        lease,
        status,
      });
      if (key)
        await this.parts.idempotency.save(scope, key, {
          requestHash,
          resourceId: query.id,
          response: { status: record.status },
        });
      return { query: record, replayed: false, resultBytesKept };
    });
  }

  async replay(scope: IdempotencyScope, key: string, requestHash: string): Promise<SubmitOutcome | undefined> {
    const found = await this.parts.idempotency.replay(scope, key, requestHash);
    if (!found) return undefined;
    const query = await this.parts.store.get(scope.organizationId, found.resourceId);
    if (!query) return undefined;
    // The first answer was the query as it stood then: queued or running, no outcome yet.
    const answered = (found.response as { status?: QueryRecord['status'] } | undefined)?.status ?? query.status;
    return {
      query: { ...query, status: answered, durationMs: null, errorCode: null, errorMessage: null },
      replayed: true,
    };
  }
}
