import type { Clock } from '../core/clock.js';
import type { MetadataDb, SqlParam } from '../store/metadata-db.js';
import { WINDOW_MS, type CellAdmission, type RateCell, type RateCells } from './rate-limiter.js';

/**
 * An admission's statement: reads the cells, decides as nextArrival() does, and advances every cell or none.
 * Parameters: (key, step) per cell, then now, now, the window, now.
 */
function admitSql(cells: number): string {
  return `
WITH wanted (key, step) AS (VALUES ${Array.from({ length: cells }, () => '(CAST(? AS TEXT), CAST(? AS FLOAT8))').join(', ')}),
decided AS (
  SELECT w.key, c.tat AS before, greatest(coalesce(c.tat, CAST(? AS FLOAT8)), CAST(? AS FLOAT8)) + w.step AS next
    FROM wanted w LEFT JOIN rate_limit_cells c ON c.key = w.key
),
verdict AS (SELECT bool_and(next - CAST(? AS FLOAT8) <= CAST(? AS FLOAT8)) AS admitted FROM decided),
written AS (
  INSERT INTO rate_limit_cells (key, tat)
  SELECT key, CAST(ceil(next) AS BIGINT) FROM decided WHERE (SELECT admitted FROM verdict)
  ON CONFLICT (key) DO UPDATE SET tat = excluded.tat
  RETURNING key
)
SELECT d.key, d.before, (SELECT admitted FROM verdict) AS admitted FROM decided d`;
}

/**
 * Rate-limit cells in the metadata store that replicas share, so 130 requests of one caller spread over three
 * replicas admit 120, not 360. An admission is one statement under the cells' locks (allLocked): every request
 * pays it, so it is one round trip, not a transaction of seven (BEGIN, two locks, a read, two writes, COMMIT).
 * The locks are taken in key order, so two admissions never wait on each other in a circle (row locks taken by
 * the statement itself did: a new caller's cell, created by one admission while another held the organization's).
 * PostgreSQL only: one SQLite store serves one host, whose processes keep their own.
 */
export class StoredRateCells implements RateCells {
  private readonly statements = new Map<number, string>();

  constructor(
    private readonly db: MetadataDb,
    private readonly clock: Clock,
  ) {}

  async admit(cells: readonly RateCell[], now: number): Promise<CellAdmission> {
    let sql = this.statements.get(cells.length);
    if (sql === undefined) this.statements.set(cells.length, (sql = admitSql(cells.length)));
    const params: SqlParam[] = [...cells.flatMap((cell) => [cell.key, cell.intervalMs]), now, now, WINDOW_MS, now];
    const rows = await this.db.allLocked<{ key: string; before: number | null; admitted: boolean }>(
      cells.map((cell) => `rate:${cell.key}` as const),
      sql,
      params,
    );
    const before = new Map<string, number>();
    for (const row of rows) if (row.before !== null) before.set(row.key, Number(row.before));
    return { admitted: rows[0]?.admitted === true, before };
  }

  /** Removes cells whose budget is full again: they hold nothing a fresh cell would not. */
  async forgetIdle(): Promise<void> {
    await this.db.run('DELETE FROM rate_limit_cells WHERE tat <= ?', [this.clock.now()]);
  }
}
