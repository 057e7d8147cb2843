import type { MetadataDb } from '../store/metadata-db.js';

/** Rows removed at once, each batch in a transaction of its own. */
const BATCH = 500;

/**
 * The record of past work that retention removes (LAKE_HISTORY_RETENTION_DAYS): finished syncs and send runs with
 * their events, and sources' log entries. Query records have a retention of their own (the query store's).
 */
export class HistoryStore {
  constructor(private readonly db: MetadataDb) {}

  /**
   * Finished syncs and send runs created before `cutoff`, with their events (removed with them), except each source's
   * newest sync and each send's newest run, which its object shows. Answers how many were removed.
   */
  async purgeJobsBefore(cutoff: number): Promise<number> {
    // Finished jobs never become live again, so what the select finds is still what the delete may remove.
    const rows = await this.db.all<{ id: string }>(
      `SELECT id FROM jobs
        WHERE kind IN ('sync', 'send') AND created < ? AND status NOT IN ('queued', 'running')
          AND id NOT IN (SELECT max(id) FROM syncs GROUP BY source_id)
          AND id NOT IN (SELECT max(id) FROM send_runs GROUP BY send_id)`,
      [cutoff],
    );
    for (let i = 0; i < rows.length; i += BATCH) {
      const ids = rows.slice(i, i + BATCH).map((row) => row.id);
      const marks = ids.map(() => '?').join(', ');
      await this.db.transaction([], () => this.db.run(`DELETE FROM jobs WHERE id IN (${marks})`, ids));
    }
    return rows.length;
  }

  /** Sources' log entries created before `cutoff`. */
  async purgeLogsBefore(cutoff: number): Promise<void> {
    await this.db.run('DELETE FROM source_logs WHERE created < ?', [cutoff]);
  }
}
