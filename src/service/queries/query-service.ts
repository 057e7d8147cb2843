import { mkdirSync, rmSync } from 'node:fs';
import { mark } from '../../support/debug-timing.js';
import { principalIdOf } from '../auth/ownership.js';
import type { Principal } from '../auth/principal.js';
import { assertNoIntrospection } from '../auth/introspection.js';
import type { PermissionStore } from '../auth/permissions.js';
import type { QueryEngine } from '../engine/query-engine.js';
import { guardSql } from '../engine/sql-guard.js';
import { LakeServiceError, isProgrammingError } from '../core/errors.js';
import { hashRequest, type IdempotencyScope, type IdempotencyStore } from '../idempotency/idempotency.js';
import { newId } from '../core/ids.js';
import type { JobRuntime } from '../jobs/job-runtime.js';
import type { JobService } from '../jobs/job-service.js';
import type { Lake } from '../storage/lake.js';
import type { LakeMetrics } from '../metrics/metrics.js';
import type { MetadataDb } from '../store/metadata-db.js';
import type { UsageService } from '../usage/usage-service.js';
import { QueryExecution, type Scheduling } from './query-execution.js';
import { QueryAdmission, type RecordedSubmission, type SubmitOutcome } from './query-admission.js';
import { QueryGrants } from './query-grants.js';
import type { SavedReads } from './saved-reads.js';
import { QueryJobs } from './query-jobs.js';
import type { QueryResults } from './query-results.js';
import type { QuerySettings } from './settings.js';
import type { QueryAsked, QueryRecord, QueryStore } from './store.js';
import { QueryHistoryStore, type QueryHistoryFilter } from './history-store.js';
import type { Directory } from '../auth/directory.js';

export type { Scheduling, SubmitOutcome };

/** What a query is asked with: its SQL, what its plan keeps (a time limit the server's caps), and its tags. */
export interface QueryInput extends QueryAsked {
  sql: string;
  /** Labels for cost attribution: shown on the query and its job, usage sums by them. */
  tags?: string[];
}

/** What the query service is made of; one of each per process. */
export interface QueryServiceParts {
  /** Queries ended, by outcome, for Prometheus. */
  metrics?: LakeMetrics;
  db: MetadataDb;
  lake: Lake;
  store: QueryStore;
  results: QueryResults;
  idempotency: IdempotencyStore;
  permissions: PermissionStore;
  runtime: JobRuntime;
  /** Jobs as callers see them: a query's job answers for its result. */
  jobs: JobService;
  settings: QuerySettings;
  engine: QueryEngine;
  scheduling: Scheduling;
  usage?: UsageService;
  /** Who is an owner or admin: they may list others' queries. */
  directory: Directory;
}

/** Whose queries a history page lists: the caller's own, everyone's, or one principal's (usr_… or a key's id). */
export type QueryCreator = 'me' | 'all' | string;

/**
 * Queries: intake here (the guard, the caller's grants, idempotency, the record and the organization's ceiling, all
 * decided before anything runs), execution in QueryExecution, results in QueryResults.
 */
export class QueryService {
  readonly store: QueryStore;
  private readonly history: QueryHistoryStore;
  readonly settings: QuerySettings;
  private readonly jobs: QueryJobs;
  private readonly grants: QueryGrants;
  private readonly execution: QueryExecution;
  private readonly admission: QueryAdmission;

  constructor(private readonly parts: QueryServiceParts) {
    this.store = parts.store;
    this.history = new QueryHistoryStore(parts.db);
    this.settings = parts.settings;
    this.jobs = new QueryJobs(parts.lake, parts.settings);
    this.admission = new QueryAdmission(parts);
    this.grants = new QueryGrants(parts.lake, parts.permissions, parts.engine, this.jobs);
    this.execution = new QueryExecution(
      parts.runtime,
      parts.store,
      parts.engine,
      this.jobs,
      parts.results,
      parts.settings,
      parts.scheduling,
      parts.usage,
      parts.metrics,
    );
  }

  /** Queries waiting in this process for a slot, and running in it. */
  depth(): { waiting: number; running: number } {
    return this.execution.depth();
  }

  /** Queries waiting in this process, per organization (for metrics). */
  waitingByOrganization(): Map<string, number> {
    return this.execution.waitingByOrganization();
  }

  /** Makes ready what the next query needs (lake serve does this at start). */
  warm(): void {
    this.parts.engine.warm();
  }

  /**
   * Checks the SQL, records the query and starts it, or queues it when the engine has no slot for it: answers at
   * once either way. Everything that can be refused before execution is refused here, with the spec's codes.
   */
  async submit(principal: Principal, input: QueryInput, idempotencyKey: string | undefined): Promise<SubmitOutcome> {
    const { sql } = input;
    await this.parts.permissions.assertServiceKeyAllowed(principal);
    mark('query submitted to the service');
    const { statement, tokens, explain } = guardSql(sql, input.parameters ? { parameters: input.parameters } : {});
    mark('guarded');
    if (explain && input.dryRun)
      throw new LakeServiceError(
        'parameter_invalid',
        'A dry run of EXPLAIN is not needed: EXPLAIN shows the plan without reading a row (EXPLAIN ANALYZE runs it). Send one or the other.',
        { param: 'dry_run' },
      );
    const access = await this.parts.permissions.accessFor(principal);
    if (access.restricted) assertNoIntrospection(tokens);
    const schema =
      input.schema === undefined
        ? undefined
        : await this.grants.schemaOf(principal.organizationId, access, input.schema);
    const scope: IdempotencyScope = {
      organizationId: principal.organizationId,
      principalId: principalIdOf(principal),
      operation: 'queries.submit',
    };
    const asked: QueryAsked = {
      ...(schema !== undefined ? { schema } : {}),
      ...(input.parameters !== undefined ? { parameters: input.parameters } : {}),
      ...(input.timeoutSeconds !== undefined
        ? { timeoutSeconds: Math.min(input.timeoutSeconds, this.settings.timeoutMs / 1000) }
        : {}),
      ...(input.rowLimit !== undefined ? { rowLimit: input.rowLimit } : {}),
      ...(input.byteLimit !== undefined ? { byteLimit: input.byteLimit } : {}),
      ...(input.dryRun === true ? { dryRun: true } : {}),
    };
    const tags = [...new Set(input.tags ?? [])];
    // A key binds to everything that decides the result: the SQL, and what else it is asked with.
    const requestHash =
      Object.keys(asked).length === 0 && tags.length === 0
        ? hashRequest(sql)
        : hashRequest(sql, JSON.stringify({ ...asked, tags }));
    const early = idempotencyKey ? await this.admission.replay(scope, idempotencyKey, requestHash) : undefined;
    if (early) return early;

    const id = newId('qr');
    const job = {
      ...(await this.jobs.forNew(id, principal.organizationId, access, statement, asked)),
      ...(explain ? { explain } : {}),
    };
    mark('catalog file ready');
    mkdirSync(job.resultDir, { recursive: true, mode: 0o700 });
    const discard = (): void => {
      this.parts.engine.forget(id);
      rmSync(job.resultDir, { recursive: true, force: true });
    };
    let parseError: string | undefined;
    let outcome: RecordedSubmission;
    let startNow = false;
    try {
      try {
        if (job.asOfError !== undefined) throw new Error(job.asOfError);
        // The grants are checked against the statement as sent: a table read AT a version is that table.
        const references = await this.parts.engine.inspect({ ...job, statement });
        if (access.restricted) await this.grants.assertReadable(principal.organizationId, access, references, schema);
      } catch (error) {
        // DuckDB could not parse it: a failed query, with nothing executed (docs/decisions.md, 12).
        // An error of lake's own code is no parse error of the caller's: a 500, logged with its stack.
        if (error instanceof LakeServiceError || isProgrammingError(error)) throw error;
        parseError = this.jobs.cleanMessage(error instanceof Error ? error.message : String(error));
      }
      mark('inspected');
      outcome = await this.admission.record(
        principal,
        scope,
        idempotencyKey,
        requestHash,
        { id, sql, plan: job.plan, tags },
        (org) => (startNow = parseError === undefined && this.execution.hasRoomFor(org)),
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
    const { resultBytesKept, ...submitted } = outcome;
    await this.execution.accept(id, principal.organizationId, job, startNow, {
      tags,
      resultBytesKept: resultBytesKept ?? 0,
    });
    return submitted;
  }

  /**
   * A query of the caller's organization. A principal restricted by table permissions sees only its own queries:
   * another's SQL and results could show tables it may not read.
   */
  async get(principal: Principal, id: string): Promise<QueryRecord> {
    await this.parts.permissions.assertServiceKeyAllowed(principal);
    let query = await this.store.get(principal.organizationId, id);
    // A query held by a process that died is failed here at the latest, when someone looks at it (one that has
    // ended, or that this process holds, needs no look).
    if (
      (query?.status === 'queued' || query?.status === 'running') &&
      !this.parts.runtime.holds(id) &&
      (await this.parts.runtime.store.expireLeases(id)) > 0
    )
      query = await this.store.get(principal.organizationId, id);
    const hidden =
      query !== undefined &&
      query.principalId !== principalIdOf(principal) &&
      (await this.parts.permissions.accessFor(principal)).restricted;
    if (!query || hidden)
      throw new LakeServiceError('query_not_found', `No query '${id.slice(0, 64)}' exists in your organization.`);
    return query;
  }

  /**
   * Query history, newest first: the caller's own queries, or (owners and admins, through a personal access token)
   * everyone's or one principal's. A principal restricted by table permissions sees only its own, as with get.
   */
  async list(
    principal: Principal,
    filter: Omit<QueryHistoryFilter, 'principalId'> & { creator?: QueryCreator },
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: QueryRecord[]; hasMore: boolean }> {
    await this.parts.permissions.assertServiceKeyAllowed(principal);
    const own = principalIdOf(principal);
    const { creator = 'me', ...rest } = filter;
    const principalId = creator === 'me' ? own : creator === 'all' ? undefined : creator;
    if (principalId !== own) await this.assertMayListOthers(principal);
    let after: QueryRecord | undefined;
    if (startingAfter !== undefined) {
      after = await this.store.get(principal.organizationId, startingAfter);
      if (!after || (principalId !== undefined && after.principalId !== principalId))
        throw new LakeServiceError(
          'invalid_cursor',
          'starting_after is not a next_cursor from a previous page of this history.',
          { param: 'starting_after' },
        );
    }
    return this.history.list(
      principal.organizationId,
      { ...rest, ...(principalId !== undefined ? { principalId } : {}) },
      limit,
      after,
    );
  }

  private async assertMayListOthers(principal: Principal): Promise<void> {
    const user = principal.userId ? await this.parts.directory.user(principal.userId) : undefined;
    const admin = user?.organizationId === principal.organizationId && ['owner', 'admin'].includes(user.role);
    if (!admin || (await this.parts.permissions.accessFor(principal)).restricted)
      throw new LakeServiceError(
        'owner_required',
        "Only owners and admins, through a personal access token, may list other people's queries; leave out creator for your own.",
        { param: 'creator' },
      );
  }

  /** The query behind a succeeded query job, for freshly signed result links (GET /jobs/{id}/result). */
  async resultOfJob(principal: Principal, id: string): Promise<QueryRecord> {
    const job = await this.parts.jobs.get(principal, id);
    if (job.status === 'queued' || job.status === 'running')
      throw new LakeServiceError('job_not_finished', `Job ${id} is ${job.status}; its result is not ready.`);
    if (job.kind !== 'query' || job.status !== 'succeeded') {
      throw new LakeServiceError(
        'job_has_no_result',
        `Job ${id} ${job.kind === 'query' ? job.status : `is a ${job.kind}`}; only succeeded queries have a result.`,
      );
    }
    return this.get(principal, id);
  }

  /** Waits, up to timeoutMs, for a query to end, wherever it runs. */
  waitFor(id: string, timeoutMs: number): Promise<void> {
    return this.execution.waitFor(id, timeoutMs);
  }

  /** Settles once the query, if this process holds it, has ended; at once otherwise. */
  settled(id: string): Promise<void> {
    return this.execution.settled(id);
  }

  /** Stops a query this process holds; false when it is held elsewhere (or not at all). */
  stop(id: string, reason: 'abandoned' | 'cancelled'): Promise<boolean> {
    return this.execution.stop(id, reason);
  }

  /** On a store replicas share: runs queries other replicas accepted while a worker here is idle. */
  startClaiming(): void {
    this.execution.startClaiming();
  }

  /** Lets queries in flight finish for up to graceMs, hands queued ones back or fails them, closes the engine. */
  drain(graceMs: number): Promise<void> {
    return this.execution.drain(graceMs);
  }

  /**
   * Refuses SQL the principal could not run as a query (for what is saved to run later as that principal); answers
   * what it reads, to be saved beside it.
   */
  assertMayRead(principal: Principal, sql: string): Promise<SavedReads | null> {
    return this.grants.assertMayRead(principal, sql);
  }

  /** Whether the principal may read what the SQL names (`reads`: as saved beside it). */
  mayRead(principal: Principal, sql: string, reads?: SavedReads | null): Promise<boolean> {
    return this.grants.mayRead(principal, sql, reads);
  }

  /** mayRead for several saved queries at once, the caller's grants looked up once. */
  mayReadEach(principal: Principal, saved: readonly { sql: string; reads?: SavedReads | null }[]): Promise<boolean[]> {
    return this.grants.mayReadEach(principal, saved);
  }

  /** Deletes queries and results past retention, and expired idempotency keys. */
  async purgeExpired(now: number = Math.floor(Date.now() / 1000)): Promise<number> {
    const removed = await this.store.purgeCreatedBefore(now - this.settings.retentionSeconds);
    await this.parts.results.forget(removed);
    await this.parts.idempotency.purgeExpired(now);
    return removed.length;
  }
}
