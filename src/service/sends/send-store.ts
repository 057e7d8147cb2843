import type { MetadataDb } from '../store/metadata-db.js';
import { countRows } from '../store/counted.js';
import type { Destination } from './deliveries/destination.js';
import { savedReadsOf, savedReadsText, type SavedReads } from '../queries/saved-reads.js';
import { DUE_PER_ORGANIZATION, DUE_PER_ROUND } from '../core/schedule-rounds.js';

export interface SendRecord {
  id: string;
  organizationId: string;
  name: string;
  sql: string;
  /** What its SQL reads, as kept when it was saved (undefined: not known). */
  reads?: SavedReads | undefined;
  destination: Destination;
  /** Sealed destination secrets (database host, user, password; webhook signing secret). */
  secrets: string;
  /** Names of the sealed secrets, which the send object shows as set (their values are never shown). */
  secretsSet: string[];
  everyMinutes: number | null;
  paused: boolean;
  /** The credential the send's SQL runs as, with that credential's table permissions at run time. */
  credentialId: string;
  principalId: string;
  nextRun: number | null;
  created: number;
  updated: number;
}

export interface SendRunRecord {
  id: string;
  sendId: string;
  trigger: 'manual' | 'schedule';
  queryId: string | null;
  rowsSent: number;
  batches: number;
  created: number;
}

interface SendRow {
  id: string;
  organization_id: string;
  name: string;
  sql: string;
  reads: string | null;
  destination: string;
  secrets: string;
  secrets_set: string;
  every_minutes: number | null;
  paused: number;
  credential_id: string;
  principal_id: string;
  next_run: number | null;
  created: number;
  updated: number;
}

const toSend = (r: SendRow): SendRecord => ({
  id: r.id,
  organizationId: r.organization_id,
  name: r.name,
  sql: r.sql,
  reads: savedReadsOf(r.reads),
  destination: JSON.parse(r.destination) as Destination,
  secrets: r.secrets,
  secretsSet: JSON.parse(r.secrets_set) as string[],
  everyMinutes: r.every_minutes,
  paused: r.paused === 1,
  credentialId: r.credential_id,
  principalId: r.principal_id,
  nextRun: r.next_run,
  created: r.created,
  updated: r.updated,
});

interface RunRow {
  id: string;
  send_id: string;
  trigger: 'manual' | 'schedule';
  query_id: string | null;
  rows_sent: number;
  batches: number;
  created: number;
}

const toRun = (r: RunRow): SendRunRecord => ({
  id: r.id,
  sendId: r.send_id,
  trigger: r.trigger,
  queryId: r.query_id,
  rowsSent: r.rows_sent,
  batches: r.batches,
  created: r.created,
});

/** Sends and their runs. A run's status lives in its job (same id); this table holds what only a send run has. */
export class SendStore {
  constructor(private readonly db: MetadataDb) {}

  async insert(send: SendRecord): Promise<void> {
    await this.db.run(
      `INSERT INTO sends (id, organization_id, name, sql, reads, destination, secrets, secrets_set, every_minutes, paused, credential_id, principal_id, next_run, created, updated)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        send.id,
        send.organizationId,
        send.name,
        send.sql,
        savedReadsText(send.reads ?? null),
        JSON.stringify(send.destination),
        send.secrets,
        JSON.stringify(send.secretsSet),
        send.everyMinutes,
        send.paused ? 1 : 0,
        send.credentialId,
        send.principalId,
        send.nextRun,
        send.created,
        send.updated,
      ],
    );
  }

  async update(send: SendRecord): Promise<void> {
    await this.db.run(
      'UPDATE sends SET name = ?, sql = ?, reads = ?, every_minutes = ?, paused = ?, next_run = ?, updated = ?, credential_id = ?, principal_id = ? WHERE id = ?',
      [
        send.name,
        send.sql,
        savedReadsText(send.reads ?? null),
        send.everyMinutes,
        send.paused ? 1 : 0,
        send.nextRun,
        send.updated,
        send.credentialId,
        send.principalId,
        send.id,
      ],
    );
  }

  /**
   * Takes one due tick of a send's schedule: moves next_run on only if it still holds the value this scheduler
   * read. Of several schedulers (replicas) reading the same due send, exactly one gets true.
   */
  async claimTick(id: string, seenNextRun: number, nextRun: number): Promise<boolean> {
    return (
      (
        await this.db.run('UPDATE sends SET next_run = ? WHERE id = ? AND next_run = ? AND paused = 0', [
          nextRun,
          id,
          seenNextRun,
        ])
      ).changes === 1
    );
  }

  async get(organizationId: string, id: string): Promise<SendRecord | undefined> {
    const row = await this.db.get<SendRow>('SELECT * FROM sends WHERE id = ? AND organization_id = ?', [
      id,
      organizationId,
    ]);
    return row && toSend(row);
  }

  async getById(id: string): Promise<SendRecord | undefined> {
    const row = await this.db.get<SendRow>('SELECT * FROM sends WHERE id = ?', [id]);
    return row && toSend(row);
  }

  async list(
    organizationId: string,
    limit: number,
    after?: SendRecord,
  ): Promise<{ data: SendRecord[]; hasMore: boolean }> {
    const rows = await this.db.all<SendRow>(
      `SELECT * FROM sends WHERE organization_id = ? AND (CAST(? AS TEXT) IS NULL OR (created, id) < (?, ?)) ORDER BY created DESC, id DESC LIMIT ?`,
      [organizationId, after?.id ?? null, after?.created ?? 0, after?.id ?? '', limit + 1],
    );
    return { data: rows.slice(0, limit).map(toSend), hasMore: rows.length > limit };
  }

  /** The organization's sends (what its ceiling counts). */
  async count(organizationId: string): Promise<number> {
    return countRows(this.db, 'SELECT count(*) AS n FROM sends WHERE organization_id = ?', [organizationId]);
  }

  async delete(id: string): Promise<void> {
    await this.db.run('DELETE FROM jobs WHERE id IN (SELECT id FROM send_runs WHERE send_id = ?)', [id]);
    await this.db.run('DELETE FROM sends WHERE id = ?', [id]);
  }

  /**
   * Scheduled sends due now, of active organizations (a deactivated one's schedules wait until it is back): each
   * organization's oldest few, at most a round's worth (schedule-rounds); the rest come in the next rounds.
   */
  async due(now: number): Promise<SendRecord[]> {
    return (
      await this.db.all<SendRow>(
        `SELECT * FROM (
           SELECT s.*, ROW_NUMBER() OVER (PARTITION BY s.organization_id ORDER BY s.next_run, s.id) AS due_rank
             FROM sends s
            WHERE s.paused = 0 AND s.every_minutes IS NOT NULL AND s.next_run <= ?
              AND s.organization_id NOT IN (SELECT id FROM organizations WHERE deactivated IS NOT NULL)) d
          WHERE d.due_rank <= ?
          ORDER BY d.next_run, d.id LIMIT ?`,
        [now, DUE_PER_ORGANIZATION, DUE_PER_ROUND],
      )
    ).map(toSend);
  }

  async insertRun(run: SendRunRecord): Promise<void> {
    await this.db.run(
      'INSERT INTO send_runs (id, send_id, trigger, query_id, rows_sent, batches, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [run.id, run.sendId, run.trigger, run.queryId, run.rowsSent, run.batches, run.created],
    );
  }

  async getRun(id: string): Promise<SendRunRecord | undefined> {
    const row = await this.db.get<RunRow>('SELECT * FROM send_runs WHERE id = ?', [id]);
    return row && toRun(row);
  }

  async recordQuery(runId: string, queryId: string): Promise<void> {
    await this.db.run('UPDATE send_runs SET query_id = ? WHERE id = ?', [queryId, runId]);
  }

  async addDelivered(runId: string, rows: number): Promise<void> {
    await this.db.run('UPDATE send_runs SET rows_sent = rows_sent + ?, batches = batches + 1 WHERE id = ?', [
      rows,
      runId,
    ]);
  }

  async runs(
    sendId: string,
    limit: number,
    after?: SendRunRecord,
  ): Promise<{ data: SendRunRecord[]; hasMore: boolean }> {
    const rows = await this.db.all<RunRow>(
      `SELECT * FROM send_runs WHERE send_id = ? AND (CAST(? AS TEXT) IS NULL OR (created, id) < (?, ?)) ORDER BY created DESC, id DESC LIMIT ?`,
      [sendId, after?.id ?? null, after?.created ?? 0, after?.id ?? '', limit + 1],
    );
    return { data: rows.slice(0, limit).map(toRun), hasMore: rows.length > limit };
  }

  /** The run of this send that is queued or running, if any. */
  async liveRun(sendId: string): Promise<string | undefined> {
    const row = await this.db.get<{ id: string }>(
      `SELECT r.id FROM send_runs r JOIN jobs j ON j.id = r.id WHERE r.send_id = ? AND j.status IN ('queued', 'running') LIMIT 1`,
      [sendId],
    );
    return row?.id;
  }
}
