import type { AsOfReference } from '../engine/as-of.js';
import type { QueryParameter } from '../engine/parameters.js';
import type { JobStatus, JobStore } from '../jobs/job-store.js';
import { lock, type MetadataDb } from '../store/metadata-db.js';

export type { ResultColumn } from '../engine/result-rows.js';
import type { ResultColumn } from '../engine/result-rows.js';

export interface QueryRecord {
  id: string;
  organizationId: string;
  principalId: string;
  status: JobStatus;
  sql: string;
  created: number;
  started: number | null;
  finished: number | null;
  durationMs: number | null;
  rowCount: number | null;
  /** Relative to the home. */
  resultFile: string | null;
  resultBytes: number | null;
  columns: ResultColumn[] | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** The default schema it was asked with, if any. */
  schema: string | null;
  /** The parameter values it was asked with, if any. */
  parameters: QueryParameter[] | null;
  /** What it was asked with besides its SQL (the plan's limits, schema and values). */
  asked: Pick<QueryPlan, 'timeoutSeconds' | 'rowLimit' | 'byteLimit' | 'dryRun'>;
  /** A limit cut rows from its result (null before it succeeded). */
  truncated: boolean | null;
  /** The tags it was asked with (none: empty). */
  tags: string[];
}

export interface QueryRow {
  id: string;
  organization_id: string;
  principal_id: string;
  status: JobStatus;
  sql: string;
  created: number;
  started: number | null;
  finished: number | null;
  duration_ms: number | null;
  row_count: number | null;
  result_file: string | null;
  result_bytes: number | null;
  columns: string | null;
  error_code: string | null;
  error_message: string | null;
  plan: string | null;
  truncated: number | null;
  tags: string | null;
}

export const toQueryRecord = (row: QueryRow): QueryRecord => {
  const plan = row.plan === null ? null : (JSON.parse(row.plan) as QueryPlan);
  return {
    id: row.id,
    organizationId: row.organization_id,
    principalId: row.principal_id,
    status: row.status,
    sql: row.sql,
    created: row.created,
    started: row.started,
    finished: row.finished,
    durationMs: row.duration_ms,
    rowCount: row.row_count,
    resultFile: row.result_file,
    resultBytes: row.result_bytes,
    columns: row.columns === null ? null : (JSON.parse(row.columns) as ResultColumn[]),
    errorCode: row.error_code,
    errorMessage: row.error_message,
    schema: plan?.schema ?? null,
    parameters: plan?.parameters ?? null,
    asked: {
      ...(plan?.timeoutSeconds !== undefined ? { timeoutSeconds: plan.timeoutSeconds } : {}),
      ...(plan?.rowLimit !== undefined ? { rowLimit: plan.rowLimit } : {}),
      ...(plan?.byteLimit !== undefined ? { byteLimit: plan.byteLimit } : {}),
      ...(plan?.dryRun ? { dryRun: true } : {}),
    },
    truncated: row.truncated === null ? null : Number(row.truncated) === 1,
    tags: row.tags === null ? [] : (JSON.parse(row.tags) as string[]),
  };
};

/** What a query is asked with besides its SQL, as its plan keeps it (POST /queries' fields of the same names). */
export interface QueryAsked {
  /** The schema unqualified names resolve in. */
  schema?: string;
  /** The values of the statement's parameters. */
  parameters?: QueryParameter[];
  /** What the caller asked to limit: time (capped by the server's), rows and bytes kept; a dry run. */
  timeoutSeconds?: number;
  rowLimit?: number;
  byteLimit?: number;
  dryRun?: boolean;
}

/** What a query reads, relative to the data directory: enough for any replica to run a queued query. */
export interface QueryPlan extends QueryAsked {
  catalogFile: string;
  readableDirs: string[];
  /** With an object store: the files it reads (relative to the data root), fetched into the cache before it runs. */
  files?: string[];
  /**
   * With an object store: what its session catalog was built from, so a replica whose cache lacks the file builds
   * the same one (the snapshot, what a restricted caller could see, its AT references, the names it reads).
   */
  session?: { snapshot: number; visible?: string[]; asOf?: AsOfReference[]; reading?: string[] };
  catalogVersion: number;
  /** The statement to run when it differs from the one sent: rewritten to read the versions it names AT. */
  statement?: string;
}

/** What a replica needs to run a query another one accepted. */
export interface ClaimedQuery {
  organizationId: string;
  sql: string;
  plan: QueryPlan | null;
  tags: string[];
}

const QUERY_COLUMNS = `j.id, j.organization_id, j.principal_id, j.status, j.created, j.started, j.finished, j.error_code, j.error_message,
                       q.sql, q.duration_ms, q.row_count, q.result_file, q.result_bytes, q.columns, q.plan, q.truncated, q.tags`;
const QUERY_FROM = 'FROM jobs j JOIN queries q ON q.id = j.id';
export const QUERY_SELECT = `SELECT ${QUERY_COLUMNS} ${QUERY_FROM}`;

/** Query records: a job (status, timestamps, failure, events) plus the query's own fields. */
export class QueryStore {
  constructor(
    private readonly db: MetadataDb,
    private readonly jobs: JobStore,
  ) {}

  /** Records a query that starts at once or waits in this process's queue, held by its lease. Call inside a transaction. */
  async insert(input: {
    id: string;
    organizationId: string;
    principalId: string;
    credentialId: string;
    sql: string;
    lease: { owner: string; expiresMs: number };
    status: 'queued' | 'running';
    plan: QueryPlan;
    tags?: readonly string[];
  }): Promise<QueryRecord> {
    const job = await this.jobs.create({
      id: input.id,
      organizationId: input.organizationId,
      kind: 'query',
      principalId: input.principalId,
      credentialId: input.credentialId,
      lease: input.lease,
      queued: input.status === 'queued',
    });
    const row: QueryRow = {
      id: input.id,
      organization_id: input.organizationId,
      principal_id: input.principalId,
      ...job,
      sql: input.sql,
      finished: null,
      duration_ms: null,
      row_count: null,
      result_file: null,
      result_bytes: null,
      columns: null,
      error_code: null,
      error_message: null,
      plan: JSON.stringify(input.plan),
      truncated: null,
      tags: input.tags && input.tags.length > 0 ? JSON.stringify(input.tags) : null,
    };
    // The catalog version is a column of its own: the collector keeps every version a live query reads.
    await this.db.write('INSERT INTO queries (id, sql, catalog_version, plan, tags) VALUES (?, ?, ?, ?, ?)', [
      row.id,
      row.sql,
      input.plan.catalogVersion,
      row.plan,
      row.tags,
    ]);
    // What was written, as get() would read it back.
    return toQueryRecord(row);
  }

  async get(organizationId: string, id: string): Promise<QueryRecord | undefined> {
    const row = await this.db.get<QueryRow>(
      `${QUERY_SELECT} WHERE j.id = ? AND j.organization_id = ? AND j.kind = 'query'`,
      [id, organizationId],
    );
    return row && toQueryRecord(row);
  }

  /** For signed downloads, where the signature, not a credential, proves the right to read. */
  async getById(id: string): Promise<QueryRecord | undefined> {
    const row = await this.db.get<QueryRow>(`${QUERY_SELECT} WHERE j.id = ? AND j.kind = 'query'`, [id]);
    return row && toQueryRecord(row);
  }

  /**
   * A query for its signed download, with whether its organization is deactivated now (one read: a download is a
   * route of the organization's, refused like every other once the operator deactivates it).
   */
  async forDownload(id: string): Promise<{ query: QueryRecord; organizationDeactivated: boolean } | undefined> {
    const row = await this.db.get<QueryRow & { organization_deactivated: number | null }>(
      `SELECT o.deactivated AS organization_deactivated, ${QUERY_COLUMNS} ${QUERY_FROM}
         JOIN organizations o ON o.id = j.organization_id WHERE j.id = ? AND j.kind = 'query'`,
      [id],
    );
    return row && { query: toQueryRecord(row), organizationDeactivated: row.organization_deactivated !== null };
  }

  /** A query claimed from the shared queue: its SQL, organization, plan and tags. */
  async claimed(id: string): Promise<ClaimedQuery | undefined> {
    const row = await this.db.get<{ organization_id: string; sql: string; plan: string | null; tags: string | null }>(
      'SELECT j.organization_id, q.sql, q.plan, q.tags FROM jobs j JOIN queries q ON q.id = j.id WHERE j.id = ?',
      [id],
    );
    return (
      row && {
        organizationId: row.organization_id,
        sql: row.sql,
        plan: row.plan === null ? null : (JSON.parse(row.plan) as QueryPlan),
        tags: row.tags === null ? [] : (JSON.parse(row.tags) as string[]),
      }
    );
  }

  async countLive(organizationId: string): Promise<number> {
    const row = await this.db.get<{ n: number }>(
      `SELECT count(*) AS n FROM jobs WHERE organization_id = ? AND kind = 'query' AND status IN ('queued', 'running')`,
      [organizationId],
    );
    return row?.n ?? 0;
  }

  /** Bytes of results the organization keeps (until retention removes them). */
  /** Counts a form made from a query's result (CSV, Arrow) against its organization's result storage. */
  async addDerivedBytes(id: string, bytes: number): Promise<void> {
    await this.db.transaction(lock.job(id), async () => {
      await this.db.run('UPDATE queries SET derived_bytes = coalesce(derived_bytes, 0) + ? WHERE id = ?', [bytes, id]);
      await this.db.run(
        `INSERT INTO result_storage (organization_id, bytes) SELECT organization_id, CAST(? AS BIGINT) FROM jobs WHERE id = ?
           ON CONFLICT (organization_id) DO UPDATE SET bytes = result_storage.bytes + excluded.bytes`,
        [bytes, id],
      );
    });
  }

  async resultBytesKept(organizationId: string): Promise<number> {
    const row = await this.db.get<{ bytes: number }>('SELECT bytes FROM result_storage WHERE organization_id = ?', [
      organizationId,
    ]);
    return row?.bytes ?? 0;
  }

  async markSucceeded(
    id: string,
    result: {
      durationMs: number;
      rowCount: number;
      resultFile: string;
      resultBytes: number;
      columns: ResultColumn[];
      truncated?: boolean;
    },
    /** Writes that go in the outcome's transaction, whether the outcome stands or not (its metering). */
    alongside?: () => Promise<void>,
  ): Promise<void> {
    await this.db.transaction(lock.job(id), async () => {
      await alongside?.();
      await this.db.write(
        'UPDATE queries SET duration_ms = ?, row_count = ?, result_file = ?, result_bytes = ?, columns = ?, truncated = ? WHERE id = ?',
        [
          Math.round(result.durationMs),
          result.rowCount,
          result.resultFile,
          result.resultBytes,
          JSON.stringify(result.columns),
          result.truncated === true ? 1 : 0,
          id,
        ],
      );
      // Only the process that ran it records its success.
      if (!(await this.jobs.finish(id, 'succeeded', undefined, true))) return;
      // Counted once, by the outcome that stands; last, as the organization's row is locked until the commit.
      await this.db.write(
        `INSERT INTO result_storage (organization_id, bytes) SELECT organization_id, CAST(? AS BIGINT) FROM jobs WHERE id = ?
           ON CONFLICT (organization_id) DO UPDATE SET bytes = result_storage.bytes + excluded.bytes`,
        [result.resultBytes, id],
      );
    });
  }

  /** Ends the query failed (or cancelled), unless it already ended: the first outcome stands. */
  async markEnded(
    id: string,
    status: 'failed' | 'cancelled',
    error: { code: string; message: string },
    durationMs: number | null,
  ): Promise<void> {
    await this.db.transaction(lock.job(id), async () => {
      if ((await this.jobs.finish(id, status, error)) && durationMs !== null) {
        await this.db.write('UPDATE queries SET duration_ms = ? WHERE id = ?', [Math.round(durationMs), id]);
      }
    });
  }

  /** Removes query records created before the cutoff and returns their ids, so their result folders can go too. */
  async purgeCreatedBefore(cutoff: number): Promise<{ id: string; organizationId: string }[]> {
    // Finished records never become live again, so what the select finds is still what the delete removes.
    const rows = await this.db.all<{ id: string; organization_id: string }>(
      `SELECT id, organization_id FROM jobs WHERE kind = 'query' AND created < ? AND status NOT IN ('queued', 'running')`,
      [cutoff],
    );
    const organizationOf = new Map(rows.map((row) => [row.id, row.organization_id]));
    for (let i = 0; i < rows.length; i += 500) {
      const ids = rows.slice(i, i + 500).map((row) => row.id);
      const marks = ids.map(() => '?').join(', ');
      await this.db.transaction([], async () => {
        // Only what this delete removed is taken off the total: a replica purging at the same moment removes
        // (and subtracts) the rest.
        const removed = await this.db.all<{ id: string; result_bytes: number | null; derived_bytes: number | null }>(
          `DELETE FROM queries WHERE id IN (${marks}) RETURNING id, result_bytes, derived_bytes`,
          ids,
        );
        const freed = new Map<string, number>();
        for (const { id, result_bytes: bytes, derived_bytes: derived } of removed) {
          const organizationId = organizationOf.get(id) as string;
          const total = Number(bytes ?? 0) + Number(derived ?? 0);
          if (total > 0) freed.set(organizationId, (freed.get(organizationId) ?? 0) + total);
        }
        for (const [organizationId, bytes] of freed) {
          await this.db.run(
            'UPDATE result_storage SET bytes = CASE WHEN bytes > ? THEN bytes - ? ELSE 0 END WHERE organization_id = ?',
            [bytes, bytes, organizationId],
          );
        }
        await this.db.run(`DELETE FROM jobs WHERE id IN (${marks})`, ids);
      });
    }
    return rows.map((r) => ({ id: r.id, organizationId: r.organization_id }));
  }
}
