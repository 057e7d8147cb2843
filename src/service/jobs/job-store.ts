import { EventEmitter } from 'node:events';
import { MAX_JOB_MESSAGE_CHARS, boundedReason } from '../core/bounded-text.js';
import { REAL_CLOCK, type Clock } from '../core/clock.js';
import { lock, type MetadataDb } from '../store/metadata-db.js';

/** Carries the id of a job that has a new event, to every process sharing the store. */
const JOB_EVENTS_CHANNEL = 'lake_job_events';
/**
 * Where a job's holder is told to look whether to stop it: a cancel was asked, or its record was ended by someone
 * else. Apart from the events channel, so a holder is not sent to the store by the events it writes itself.
 */
const JOB_STOPS_CHANNEL = 'lake_job_stops';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export const TERMINAL_STATUSES: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'cancelled']);

/** What a job is the work of. */
export type JobKind = 'query' | 'sync' | 'send';

export interface JobRecord {
  id: string;
  organizationId: string;
  kind: JobKind;
  status: JobStatus;
  principalId: string;
  credentialId: string;
  created: number;
  started: number | null;
  finished: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  cancelRequested: boolean;
  /** A query job's SQL (null for other kinds, and for a query no longer kept). */
  sql: string | null;
  /** A query job's tags (empty for other kinds). */
  tags: string[];
}

/** Which jobs a list shows: one status, one kind, created at or after a time (epoch seconds). */
export interface JobFilter {
  status?: JobStatus;
  kind?: JobKind;
  since?: number;
}

export interface JobEvent {
  jobId: string;
  seq: number;
  type: string;
  data: Record<string, unknown>;
  created: number;
}

interface JobRow {
  id: string;
  organization_id: string;
  kind: string;
  status: JobStatus;
  principal_id: string;
  credential_id: string;
  created: number;
  started: number | null;
  finished: number | null;
  error_code: string | null;
  error_message: string | null;
  cancel_requested: number;
  query_sql?: string | null;
  query_tags?: string | null;
}

/** A job's columns, and a query job's SQL with them: one read for a list, not one more per query. */
const JOB_COLUMNS =
  'jobs.*, (SELECT q.sql FROM queries q WHERE q.id = jobs.id) AS query_sql, (SELECT q.tags FROM queries q WHERE q.id = jobs.id) AS query_tags';

const toJob = (row: JobRow): JobRecord => ({
  id: row.id,
  organizationId: row.organization_id,
  kind: row.kind as JobKind,
  status: row.status,
  principalId: row.principal_id,
  credentialId: row.credential_id,
  created: row.created,
  started: row.started,
  finished: row.finished,
  errorCode: row.error_code,
  errorMessage: row.error_message,
  cancelRequested: row.cancel_requested === 1,
  sql: row.query_sql ?? null,
  tags: row.query_tags ? (JSON.parse(row.query_tags) as string[]) : [],
});

export interface NewJob {
  id: string;
  organizationId: string;
  kind: JobKind;
  principalId: string;
  credentialId: string;
  /** Set for work a process holds (running, or in its own queue); says which process, and until when. */
  lease?: { owner: string; expiresMs: number };
  /** Work held with a lease that waits for a free slot in its process before it runs. */
  queued?: boolean;
}

/**
 * Jobs, the durable record of asynchronous work, and the events each one emits. Every status change writes its
 * event in the same transaction, so a stream never shows a state the record does not have, and the reverse.
 * Each new event is announced through the store (NOTIFY on PostgreSQL), so streams in any process that shares it
 * need not wait for a poll.
 */
export class JobStore {
  private readonly appended = new EventEmitter();
  private readonly stopsAsked = new EventEmitter();
  /** Stops delivering the store's job notices to this store's listeners. */
  readonly stopListening: () => void;

  constructor(
    private readonly db: MetadataDb,
    readonly clock: Clock = REAL_CLOCK,
  ) {
    this.appended.setMaxListeners(0);
    this.stopsAsked.setMaxListeners(0);
    const unlisten = [
      db.listen(JOB_EVENTS_CHANNEL, (jobId) => this.appended.emit(jobId)),
      db.listen(JOB_STOPS_CHANNEL, (jobId) => this.stopsAsked.emit(jobId)),
    ];
    this.stopListening = () => unlisten.forEach((stop) => stop());
  }

  /** The store's clock, in milliseconds, for lease deadlines set by the processes that hold work. */
  clockNow(): number {
    return this.clock.now();
  }

  private seconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  /**
   * Records new work: running when it starts at once, queued otherwise (with the lease of the process holding it,
   * if any). Call inside a transaction. Returns what the store gave it, known without reading it back.
   */
  async create(job: NewJob): Promise<Pick<JobRecord, 'status' | 'created' | 'started'>> {
    const now = this.seconds();
    const running = job.lease !== undefined && !job.queued;
    const recorded = { status: running ? 'running' : 'queued', created: now, started: running ? now : null } as const;
    await this.db.transaction(lock.job(job.id), async () => {
      await this.db.write(
        `INSERT INTO jobs (id, organization_id, kind, status, principal_id, credential_id, created, started, lease_owner, lease_expires)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          job.id,
          job.organizationId,
          job.kind,
          recorded.status,
          job.principalId,
          job.credentialId,
          recorded.created,
          recorded.started,
          job.lease?.owner ?? null,
          job.lease?.expiresMs ?? null,
        ],
      );
      await this.append(job.id, 'job.created', { status: recorded.status });
      if (running) await this.append(job.id, 'job.running', { status: 'running' });
    });
    return recorded;
  }

  /**
   * Moves unfinished work to a final status, with its event; false when it had already finished (the first
   * outcome stands).
   */
  async finish(
    id: string,
    status: 'succeeded' | 'failed' | 'cancelled',
    error?: { code: string; message: string },
    /** The process that holds the job ends it itself: it has nothing to be told (onStopAsked). */
    byHolder = false,
  ): Promise<boolean> {
    // Whatever made the message (another server's words among them), the job and its event keep a bounded one.
    const kept = error && { code: error.code, message: boundedReason(error.message, MAX_JOB_MESSAGE_CHARS) };
    return this.db.transaction(lock.job(id), async () => {
      const changed =
        (
          await this.db.run(
            `UPDATE jobs SET status = ?, finished = ?, error_code = ?, error_message = ?, lease_owner = NULL, lease_expires = NULL
           WHERE id = ? AND status IN ('queued', 'running')`,
            [status, this.seconds(), kept?.code ?? null, kept?.message ?? null, id],
          )
        ).changes > 0;
      if (changed) await this.append(id, `job.${status}`, { status, ...(kept ? { error: kept } : {}) });
      // Ended by someone else (cancelled while queued, given up as lost): its holder, if any, stops it.
      if (changed && !byHolder) await this.db.notify(JOB_STOPS_CHANNEL, id);
      return changed;
    });
  }

  /** Takes queued work for this process: running, with its lease. False when someone else took it first. */
  async claim(id: string, owner: string, expiresMs: number): Promise<boolean> {
    return this.db.transaction(lock.job(id), async () => {
      const taken =
        (
          await this.db.run(
            `UPDATE jobs SET status = 'running', started = ?, lease_owner = ?, lease_expires = ? WHERE id = ? AND status = 'queued'`,
            [this.seconds(), owner, expiresMs, id],
          )
        ).changes > 0;
      if (taken) await this.append(id, 'job.running', { status: 'running' });
      return taken;
    });
  }

  /**
   * Takes the oldest queued job of a kind for this process, running under its lease; undefined when none waits.
   * On PostgreSQL, FOR UPDATE SKIP LOCKED lets replicas claiming at the same moment each take a different job
   * instead of queueing behind one row; SQLite's single writer gives the same one-taker guarantee. `except` leaves
   * out what the caller holds itself or has no room for.
   */
  async claimNext(
    kind: JobKind,
    owner: string,
    expiresMs: number,
    except: { heldBy?: string; organizations?: readonly string[] } = {},
  ): Promise<{ id: string; organizationId: string } | undefined> {
    const orgs = except.organizations ?? [];
    const pick = `SELECT id FROM jobs WHERE kind = ? AND status = 'queued'
                    AND (CAST(? AS TEXT) IS NULL OR lease_owner IS NULL OR lease_owner <> ?)
                    ${orgs.length > 0 ? `AND organization_id NOT IN (${orgs.map(() => '?').join(', ')})` : ''}
                  ORDER BY created, id LIMIT 1${this.db.dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : ''}`;
    // No named lock: the row lock (PostgreSQL) or the write lock (SQLite) is what makes the claim one taker's.
    return this.db.transaction([], async () => {
      const taken = await this.db.get<{ id: string; organization_id: string }>(
        `UPDATE jobs SET status = 'running', started = ?, lease_owner = ?, lease_expires = ? WHERE id = (${pick}) AND status = 'queued' RETURNING id, organization_id`,
        [this.seconds(), owner, expiresMs, kind, except.heldBy ?? null, except.heldBy ?? null, ...orgs],
      );
      if (!taken) return undefined;
      await this.db.transaction(lock.job(taken.id), () => this.append(taken.id, 'job.running', { status: 'running' }));
      return { id: taken.id, organizationId: taken.organization_id };
    });
  }

  /**
   * Gives queued jobs this process held back to the shared queue (no lease, so no one takes them for lost) for
   * another replica to claim; returns the ones given back.
   */
  async handBack(owner: string, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.all<{ id: string }>(
      `UPDATE jobs SET lease_owner = NULL, lease_expires = NULL WHERE status = 'queued' AND lease_owner = ? AND id IN (${ids.map(() => '?').join(', ')}) RETURNING id`,
      [owner, ...ids],
    );
    return rows.map((row) => row.id);
  }

  /**
   * Who holds a job now (the owner of its lease), in what state, and whether it ever started; undefined when it
   * does not exist.
   */
  async holder(id: string): Promise<{ status: JobStatus; owner: string | null; started: boolean } | undefined> {
    const row = await this.db.get<{ status: JobStatus; owner: string | null; started: number | null }>(
      'SELECT status, lease_owner AS owner, started FROM jobs WHERE id = ?',
      [id],
    );
    return row && { status: row.status, owner: row.owner, started: row.started !== null };
  }

  /** Records an event of the work itself (progress), numbered after the job's others. */
  async appendEvent(jobId: string, type: string, data: Record<string, unknown>): Promise<void> {
    await this.db.transaction(lock.job(jobId), () => this.append(jobId, type, data));
  }

  async get(organizationId: string, id: string): Promise<JobRecord | undefined> {
    const row = await this.db.get<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ? AND organization_id = ?`, [
      id,
      organizationId,
    ]);
    return row && toJob(row);
  }

  async getById(id: string): Promise<JobRecord | undefined> {
    const row = await this.db.get<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ?`, [id]);
    return row && toJob(row);
  }

  /**
   * Newest first; `startingAfter` is the last id of the previous page. `principalId` limits to one principal's jobs;
   * `filter` to a status, a kind and a first creation time.
   */
  async list(
    organizationId: string,
    limit: number,
    startingAfter?: JobRecord,
    principalId?: string,
    filter: JobFilter = {},
  ): Promise<{ data: JobRecord[]; hasMore: boolean }> {
    const rows = await this.db.all<JobRow>(
      `SELECT ${JOB_COLUMNS} FROM jobs WHERE organization_id = ? AND (CAST(? AS TEXT) IS NULL OR principal_id = ?)
         AND (CAST(? AS TEXT) IS NULL OR status = ?) AND (CAST(? AS TEXT) IS NULL OR kind = ?)
         AND created >= ?
         AND (CAST(? AS TEXT) IS NULL OR created < ? OR (created = ? AND id < ?))
         ORDER BY created DESC, id DESC LIMIT ?`,
      [
        organizationId,
        principalId ?? null,
        principalId ?? null,
        filter.status ?? null,
        filter.status ?? null,
        filter.kind ?? null,
        filter.kind ?? null,
        filter.since ?? 0,
        startingAfter?.id ?? null,
        startingAfter?.created ?? 0,
        startingAfter?.created ?? 0,
        startingAfter?.id ?? '',
        limit + 1,
      ],
    );
    return { data: rows.slice(0, limit).map(toJob), hasMore: rows.length > limit };
  }

  async events(jobId: string, afterSeq: number): Promise<JobEvent[]> {
    const rows = await this.db.all<{ job_id: string; seq: number; type: string; data: string; created: number }>(
      'SELECT * FROM job_events WHERE job_id = ? AND seq > ? ORDER BY seq',
      [jobId, afterSeq],
    );
    return rows.map((r) => ({
      jobId: r.job_id,
      seq: r.seq,
      type: r.type,
      data: JSON.parse(r.data) as Record<string, unknown>,
      created: r.created,
    }));
  }

  async lastSeq(jobId: string): Promise<number> {
    return (
      (
        await this.db.get<{ seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM job_events WHERE job_id = ?', [
          jobId,
        ])
      )?.seq ?? 0
    );
  }

  /** Calls listener whenever this process appends an event to the job; returns the way to stop listening. */
  onEvent(jobId: string, listener: () => void): () => void {
    this.appended.on(jobId, listener);
    return () => this.appended.off(jobId, listener);
  }

  /**
   * Calls listener when someone asks the job's holder to look whether to stop it (a cancel, an end by another
   * process), from any process that shares the store; returns the way to stop listening.
   */
  onStopAsked(jobId: string, listener: () => void): () => void {
    this.stopsAsked.on(jobId, listener);
    return () => this.stopsAsked.off(jobId, listener);
  }

  /** Asks the process running the job to stop it; marked once, with an event. True when the job is still running. */
  async requestCancel(id: string): Promise<boolean> {
    return this.db.transaction(lock.job(id), async () => {
      const changed =
        (
          await this.db.run(
            `UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND status = 'running' AND cancel_requested = 0`,
            [id],
          )
        ).changes > 0;
      if (changed) {
        await this.append(id, 'job.cancel_requested', { status: 'running' });
        await this.db.notify(JOB_STOPS_CHANNEL, id);
      }
      return changed || (await this.getById(id))?.status === 'running';
    });
  }

  /** Extends the leases this process holds, so others do not take its work for lost. */
  async renewLeases(owner: string, ids: readonly string[], expiresMs: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db.run(
      `UPDATE jobs SET lease_expires = ? WHERE lease_owner = ? AND status IN ('queued', 'running') AND id IN (${ids.map(() => '?').join(', ')})`,
      [expiresMs, owner, ...ids],
    );
  }

  /**
   * Of these jobs a process holds, the ones it should stop: someone asked to cancel them while they ran, or their
   * record ended without the holder (cancelled while queued, or given up as lost while the holder could not reach
   * the store).
   */
  async toStop(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.all<{ id: string }>(
      `SELECT id FROM jobs WHERE id IN (${ids.map(() => '?').join(', ')})
         AND ((cancel_requested = 1 AND status = 'running') OR status IN ('succeeded', 'failed', 'cancelled'))`,
      [...ids],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Fails work whose process stopped renewing its lease (it crashed or was killed), so no job stays running for
   * ever. Query results cannot be resumed safely: their engine state died with the process.
   */
  async expireLeases(onlyId?: string): Promise<number> {
    const due = await this.db.all<{ id: string }>(
      `SELECT id FROM jobs WHERE status IN ('queued', 'running') AND lease_expires IS NOT NULL AND lease_expires < ? AND (CAST(? AS TEXT) IS NULL OR id = ?)`,
      [this.clock.now(), onlyId ?? null, onlyId ?? null],
    );
    let expired = 0;
    for (const { id } of due) {
      const failed = await this.finish(id, 'failed', {
        code: 'worker_lost',
        message:
          'The process running this job stopped (it crashed or was killed) before the job finished. Run it again.',
      });
      if (failed) expired++;
    }
    return expired;
  }

  /**
   * Numbers the event after the job's last one. Every caller holds the job's lock (lock.job), so two appends to one
   * job never read the same last number, in this process or another replica.
   */
  private async append(jobId: string, type: string, data: Record<string, unknown>): Promise<void> {
    const at = this.seconds();
    // Numbered in the same statement that writes it, and announced by it; held to go with the transaction's next
    // statement (write()). The notice is delivered after the transaction commits, so a listener reading the store
    // sees the event.
    await this.db.write(
      `INSERT INTO job_events (job_id, seq, type, data, created)
         SELECT ?, coalesce(max(seq), 0) + 1, ?, ?, ? FROM job_events WHERE job_id = ?`,
      [jobId, type, JSON.stringify({ job: jobId, ...data, at }), at, jobId],
      { channel: JOB_EVENTS_CHANNEL, payload: jobId },
    );
  }
}
