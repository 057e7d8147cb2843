import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBPreparedStatement } from '@duckdb/node-api';
import type { Principal } from '../auth/principal.js';
import { assertNoIntrospection } from '../catalog/introspection.js';
import type { PermissionStore, TableAccess } from '../catalog/permissions.js';
import { quoteIdentifier, quoteLiteral } from '../engine/duckdb.js';
import { inspectSelect } from '../engine/inspect.js';
import type { TableReference } from '../engine/table-refs.js';
import { sharedInstancePool, type InstancePool } from '../engine/instance-pool.js';
import { openSandbox, type Sandbox } from '../engine/sandbox.js';
import { guardSql } from '../engine/sql-guard.js';
import { LakeServiceError } from '../errors.js';
import { hashRequest, type IdempotencyScope, type IdempotencyStore } from '../idempotency.js';
import { newId } from '../ids.js';
import type { JobStore } from '../jobs/job-store.js';
import type { UsageService } from '../usage/usage-service.js';
import type { JobSettings } from '../jobs/settings.js';
import type { Lake } from '../lake/lake.js';
import { writeTransaction, type MetadataDb } from '../store/database.js';
import type { ResultReader } from './result-reader.js';
import type { QuerySettings } from './settings.js';
import { QueryStore, type QueryRecord } from './store.js';

export interface SubmitOutcome {
  query: QueryRecord;
  /** Set when an Idempotency-Key replayed an earlier submission: the response it gave then. */
  replayedResponse?: unknown;
}

/** Types Parquet cannot hold exactly (HUGEINT would become DOUBLE); their columns are written as exact text. */
const NEEDS_TEXT = /\b(U?HUGEINT|UNION)\b/;

export function principalIdOf(principal: Principal): string {
  return principal.userId ?? principal.credentialId;
}

/**
 * Runs read-only SQL against the lake. Submission checks everything that can be checked before execution and
 * answers at once; execution runs in its own sandboxed DuckDB instance, off the event loop, and writes the result
 * once, as Parquet, in the home.
 */
export class QueryService {
  readonly store: QueryStore;
  private readonly running = new Map<string, { done: Promise<void>; stop(): void }>();
  /** Why this process stopped a query it runs, so the query ends with the right status and message. */
  private readonly stopped = new Map<string, 'abandoned' | 'cancelled'>();
  private readonly pool: InstancePool;
  /** Names this process in job leases. */
  private readonly workerId = newId('wrk');
  private renewing = false;
  /** Wakes the lease loop when the last query here ends, so it never holds a finished process open. */
  private idle = new AbortController();

  constructor(
    private readonly db: MetadataDb,
    private readonly lake: Lake,
    private readonly idempotency: IdempotencyStore,
    private readonly reader: ResultReader,
    private readonly permissions: PermissionStore,
    private readonly jobs: JobStore,
    private readonly jobSettings: JobSettings,
    readonly settings: QuerySettings,
    /** Builds the response an idempotent replay returns, so it is stored exactly as first sent. */
    private readonly submitResponse: (query: QueryRecord) => unknown,
    private readonly usage?: UsageService,
  ) {
    this.store = new QueryStore(db, jobs);
    this.pool = sharedInstancePool(settings);
  }

  /** Keeps an engine instance prepared for the next query from now on (lake serve does this at start). */
  warm(): void {
    this.pool.warm({ keep: true });
  }

  async submit(principal: Principal, body: Record<string, unknown>, idempotencyKey: string | undefined): Promise<SubmitOutcome> {
    const sql = requireSql(body);
    this.permissions.assertServiceKeyAllowed(principal);
    const { statement, tokens } = guardSql(sql);
    const access = this.permissions.accessFor(principal);
    if (access.restricted) assertNoIntrospection(tokens);
    const scope: IdempotencyScope = { organizationId: principal.organizationId, principalId: principalIdOf(principal), endpoint: 'POST /queries' };
    const requestHash = hashRequest(sql);
    const early = idempotencyKey ? this.replay(scope, idempotencyKey, requestHash) : undefined;
    if (early) return early;

    const id = newId('qr');
    const resultDir = this.lake.layout.resultDir(principal.organizationId, id);
    mkdirSync(resultDir, { recursive: true, mode: 0o700 });
    const discard = (sandbox?: Sandbox): void => {
      sandbox?.close();
      rmSync(resultDir, { recursive: true, force: true });
    };
    let checked: CheckedStatement;
    let outcome: SubmitOutcome;
    try {
      checked = await this.openChecked(principal.organizationId, access, statement, resultDir);
    } catch (error) {
      discard();
      throw error;
    }
    try {
      outcome = this.record(principal, scope, idempotencyKey, requestHash, id, sql);
    } catch (error) {
      discard(checked.sandbox);
      throw error;
    }
    if (outcome.replayedResponse !== undefined) {
      // Another request with this key won the race while this one was checking its SQL.
      discard(checked.sandbox);
      return outcome;
    }
    if (!checked.prepared) {
      // DuckDB could not parse or bind it: a failed query, with nothing executed.
      this.store.markEnded(id, 'failed', { code: 'query_failed', message: checked.parseError ?? 'The statement could not be prepared.' }, 0);
      checked.sandbox.close();
      return outcome;
    }
    this.start(outcome.query, checked.sandbox, checked.prepared, resultDir);
    return outcome;
  }

  /**
   * A query of the caller's organization. A principal restricted by table permissions sees only its own queries:
   * another's SQL and results could show tables it may not read.
   */
  get(principal: Principal, id: string): QueryRecord {
    this.permissions.assertServiceKeyAllowed(principal);
    // A query held by a process that died is failed here at the latest, when someone looks at it.
    this.jobs.expireLeases(id);
    const query = this.store.get(principal.organizationId, id);
    const hidden = query !== undefined && query.principalId !== principalIdOf(principal) && this.permissions.accessFor(principal).restricted;
    if (!query || hidden) throw new LakeServiceError('query_not_found', `No query '${id.slice(0, 64)}' exists in your organization.`);
    return query;
  }

  /** Waits, up to timeoutMs, for a query this process is running; returns at once for any other. */
  async waitFor(id: string, timeoutMs: number): Promise<void> {
    const execution = this.running.get(id);
    if (!execution || timeoutMs <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([execution.done, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  resultPath(query: QueryRecord): string | undefined {
    return query.resultFile ? this.lake.layout.toAbsolute(query.resultFile) : undefined;
  }

  /** Deletes queries and results past retention, and expired idempotency keys. */
  purgeExpired(now: number = Math.floor(Date.now() / 1000)): number {
    const removed = this.store.purgeCreatedBefore(now - this.settings.retentionSeconds);
    for (const { id, organizationId } of removed) rmSync(this.lake.layout.resultDir(organizationId, id), { recursive: true, force: true });
    this.idempotency.purgeExpired(now);
    return removed.length;
  }

  /**
   * Lets queries in flight finish for up to graceMs, then stops the rest and records them as failed with the
   * reason, so no query is left "running" after the process that ran it is gone.
   */
  async drain(graceMs: number): Promise<void> {
    await this.drainQueries(graceMs);
    await this.pool.release();
  }

  private async drainQueries(graceMs: number): Promise<void> {
    const all = (): Promise<unknown> => Promise.allSettled([...this.running.values()].map((r) => r.done));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all(), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    for (const id of this.running.keys()) this.stop(id, 'abandoned');
    await all();
  }

  /** Interrupts a query this process runs; false when it runs elsewhere (or not at all). */
  stop(id: string, reason: 'abandoned' | 'cancelled'): boolean {
    const execution = this.running.get(id);
    if (!execution) return false;
    this.stopped.set(id, reason);
    execution.stop();
    return true;
  }

  /** Settles once the query, if this process runs it, has ended; at once otherwise. */
  async settled(id: string): Promise<void> {
    await this.running.get(id)?.done;
  }

  /**
   * A sandbox for the query, and DuckDB's verdict on the statement. A restricted principal's sandbox attaches a
   * catalog of only the tables it may read, and may open only their files. Refusals close it and throw.
   */
  private async openChecked(organizationId: string, access: TableAccess, statement: string, resultDir: string): Promise<CheckedStatement> {
    const { file, tables } = await this.lake.catalogFile(organizationId, access);
    const readableDirs = access.restricted ? tables.map((t) => this.lake.layout.toAbsolute(t.snapshot.directory)) : [this.lake.layout.tablesDir(organizationId)];
    const sandbox = await openSandbox({ catalogFile: file, readableDirs, writableDir: resultDir, pool: this.pool });
    try {
      const check = access.restricted ? (refs: TableReference[]) => this.assertReadable(organizationId, access, refs) : undefined;
      return { sandbox, prepared: (await inspectSelect(sandbox.connection, statement, check)).prepared };
    } catch (error) {
      if (!(error instanceof LakeServiceError)) return { sandbox, parseError: this.cleanEngineMessage(error) };
      sandbox.close();
      throw error;
    }
  }

  /**
   * Records the query as running, under the write lock, together with what must be decided atomically: a replay
   * of the same Idempotency-Key (exactly one query per key) and the organization's in-flight ceiling.
   */
  private record(principal: Principal, scope: IdempotencyScope, key: string | undefined, requestHash: string, id: string, sql: string): SubmitOutcome {
    return writeTransaction(this.db, () => {
      const replayed = key ? this.replay(scope, key, requestHash) : undefined;
      if (replayed) return replayed;
      if (this.store.countLive(principal.organizationId) >= this.settings.maxInFlight) {
        throw new LakeServiceError('too_many_queries', `Your organization already has ${this.settings.maxInFlight} queries running. Wait for one to finish.`, {
          headers: { 'Retry-After': '1' },
        });
      }
      const lease = { owner: this.workerId, expiresMs: this.jobs.clockNow() + this.jobSettings.leaseMs };
      const query = this.store.insertRunning({ id, organizationId: principal.organizationId, principalId: scope.principalId, credentialId: principal.credentialId, sql, lease });
      if (key) this.idempotency.save(scope, key, { requestHash, resourceId: id, response: this.submitResponse(query) });
      return { query };
    });
  }

  private start(query: QueryRecord, sandbox: Sandbox, prepared: DuckDBPreparedStatement, resultDir: string): void {
    const execution = this.execute(query, sandbox, prepared, resultDir);
    this.running.set(query.id, { done: execution, stop: () => sandbox.interrupt() });
    this.keepLeases();
    void execution.finally(() => {
      this.running.delete(query.id);
      this.stopped.delete(query.id);
      if (this.running.size === 0) this.idle.abort();
    });
  }

  /**
   * While queries run here: renew their leases (so no one takes them for lost) and stop any that someone asked
   * to cancel, from this process or another, through the job's durable cancel flag.
   */
  private keepLeases(): void {
    if (this.renewing) return;
    this.renewing = true;
    this.idle = new AbortController();
    const idle = this.idle.signal;
    // On the jobs' clock, like the lease deadlines themselves; ends when nothing runs here any more.
    const every = Math.min(1000, this.jobSettings.leaseMs / 3);
    void (async () => {
      while (this.running.size > 0) {
        await this.jobs.clock.sleep(every, idle);
        if (idle.aborted) break;
        const ids = [...this.running.keys()];
        this.jobs.renewLeases(this.workerId, ids, this.jobs.clockNow() + this.jobSettings.leaseMs);
        for (const id of this.jobs.cancelRequested(ids)) this.stop(id, 'cancelled');
      }
      this.renewing = false;
      // A query that started while this loop was ending needs a loop of its own.
      if (this.running.size > 0) this.keepLeases();
    })();
  }

  private replay(scope: IdempotencyScope, key: string, requestHash: string): SubmitOutcome | undefined {
    const found = this.idempotency.replay(scope, key, requestHash);
    if (!found) return undefined;
    const query = this.store.get(scope.organizationId, found.resourceId);
    if (!query) return undefined;
    return { query, replayedResponse: found.response };
  }

  /**
   * Every table or view a restricted query names must be one it may read, directly or (for views) through every
   * table underneath. The refusal names what the query named, never a hidden table underneath a view, and reads
   * the same whether the name is hidden or does not exist.
   */
  private assertReadable(organizationId: string, access: TableAccess, references: readonly TableReference[]): void {
    const { tables, views } = this.lake.visible(organizationId, access);
    const visible = new Set([...tables, ...views].map((o) => `${o.schema.toLowerCase()}\u0000${o.name.toLowerCase()}`));
    for (const ref of references) {
      const inLake = ref.catalog === '' || ref.catalog.toLowerCase() === 'lake';
      if (inLake && ref.schema !== '' && visible.has(`${ref.schema.toLowerCase()}\u0000${ref.table.toLowerCase()}`)) continue;
      const written = [ref.catalog, ref.schema, ref.table].filter(Boolean).join('.');
      throw new LakeServiceError('grant_table_denied', `This credential may not read ${written}. Ask an owner for a grant (lake admin grant).`);
    }
  }

  private async execute(query: QueryRecord, sandbox: Sandbox, prepared: DuckDBPreparedStatement, resultDir: string): Promise<void> {
    const file = join(resultDir, 'result.parquet');
    const textColumns: string[] = [];
    for (let i = 0; i < prepared.columnCount; i++) {
      if (NEEDS_TEXT.test(prepared.columnType(i).toString())) textColumns.push(prepared.columnName(i));
    }
    const statement = guardSql(query.sql).statement;
    const source = textColumns.length === 0
      ? `${statement}\n`
      : `SELECT * REPLACE (${textColumns.map((c) => `CAST(${quoteIdentifier(c)} AS VARCHAR) AS ${quoteIdentifier(c)}`).join(', ')}) FROM (${statement}\n)`;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      sandbox.interrupt();
    }, this.settings.timeoutMs);
    const started = performance.now();
    // The result is usually read as soon as it exists; the reader's engine starts while the query runs.
    this.reader.warm();
    try {
      const copied = await sandbox.connection.run(`COPY (${source}) TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd)`);
      const durationMs = performance.now() - started;
      const columns = await this.reader.describe(file);
      const resultBytes = statSync(file).size;
      this.store.markSucceeded(query.id, {
        durationMs,
        rowCount: Number(copied.rowsChanged),
        resultFile: this.lake.layout.toRelative(file),
        resultBytes,
        columns,
      });
      this.usage?.record(query.organizationId, 'result_bytes', resultBytes);
    } catch (error) {
      const durationMs = performance.now() - started;
      const reason = this.stopped.get(query.id);
      if (reason === 'cancelled') {
        this.store.markEnded(query.id, 'cancelled', { code: 'cancelled', message: 'The query was cancelled on request.' }, durationMs);
      } else {
        const [code, message] = timedOut
          ? ['query_timeout', `The query ran longer than the ${this.settings.timeoutMs / 1000} s limit and was stopped.`]
          : reason === 'abandoned'
            ? ['query_abandoned', 'The lake process running this query stopped before it finished (in local mode, when the command exits). Run it again, or use lake serve for long queries.']
            : ['query_failed', this.cleanEngineMessage(error, true)];
        this.store.markEnded(query.id, 'failed', { code, message }, durationMs);
      }
      rmSync(file, { force: true });
    } finally {
      // Metered once it has run, whether it succeeded or not.
      this.usage?.record(query.organizationId, 'queries_run', 1);
      clearTimeout(timer);
      sandbox.close();
    }
  }

  /** Engine messages help, but must not show where the lake lives on disk or the COPY lake wraps queries in. */
  private cleanEngineMessage(error: unknown, fromExecution = false): string {
    let message = error instanceof Error ? error.message : String(error);
    message = message.split(this.lake.layout.homeRoot).join('<lake>');
    if (fromExecution) message = message.replace(/\n+LINE \d+:[\s\S]*$/, '');
    return message.trim();
  }
}

interface CheckedStatement {
  sandbox: Sandbox;
  /** Absent when DuckDB could not parse or bind the statement; parseError then says why. */
  prepared?: DuckDBPreparedStatement;
  parseError?: string;
}

function requireSql(body: Record<string, unknown>): string {
  if (body.sql === undefined || body.sql === null) throw new LakeServiceError('parameter_missing', 'Send the SQL to run in the field sql.', { param: 'sql' });
  if (typeof body.sql !== 'string') throw new LakeServiceError('parameter_invalid', 'sql must be a string.', { param: 'sql' });
  return body.sql;
}
