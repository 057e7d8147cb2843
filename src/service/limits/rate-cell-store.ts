import type { Clock } from '../core/clock.js';
import type { MetadataDb, SqlParam } from '../store/metadata-db.js';
import { WINDOW_MS, type CellAdmission, type RateCell, type RateCells } from './rate-limiter.js';

/**
 * One admission as one statement: every request pays it, so it is one round trip rather than a transaction of
 * seven (BEGIN, two locks, a read, two writes, COMMIT). It locks the cells it finds, in key order, decides as
 * nextArrival() does, and advances every cell or none; the row locks last only as long as the statement.
 * Parameters: (key, step) per cell, then now, the window, now, now.
 */
function admitSql(cells: number): string {
  return `
WITH wanted (key, step) AS (VALUES ${Array.from({ length: cells }, () => '(CAST(? AS TEXT), CAST(? AS FLOAT8))').join(', ')}),
locked AS (SELECT key, tat FROM rate_limit_cells WHERE key IN (SELECT key FROM wanted) ORDER BY key FOR UPDATE),
decided AS (
  SELECT w.key, l.tat AS before, greatest(coalesce(l.tat, CAST(? AS FLOAT8)), CAST(? AS FLOAT8)) + w.step AS next
    FROM wanted w LEFT JOIN locked l ON l.key = w.key
),
verdict AS (SELECT bool_and(next - CAST(? AS FLOAT8) <= CAST(? AS FLOAT8)) AS admitted FROM decided),
written AS (
  INSERT INTO rate_limit_cells (key, tat)
  SELECT key, CAST(ceil(next) AS BIGINT) FROM decided WHERE (SELECT admitted FROM verdict)
  -- A cell another admission created after this statement began (a new caller's first requests at once) was not
  -- locked above: it is advanced from where that admission left it, so neither request goes uncounted.
  ON CONFLICT (key) DO UPDATE SET tat = CASE
    WHEN rate_limit_cells.tat IS NOT DISTINCT FROM (SELECT d.before FROM decided d WHERE d.key = excluded.key)
      THEN excluded.tat
    ELSE greatest(rate_limit_cells.tat, CAST(? AS BIGINT)) + (excluded.tat - CAST(? AS BIGINT)) END
  RETURNING key
)
SELECT d.key, d.before, (SELECT admitted FROM verdict) AS admitted FROM decided d`;
}

/**
 * Rate-limit cells in the metadata store that replicas share, so 130 requests of one caller spread over three
 * replicas admit 120, not 360. PostgreSQL only: one SQLite store serves one host, whose processes keep their own.
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
    // Whole milliseconds, as the cells store them: the subtraction in the conflict branch stays exact.
    const at = Math.floor(now);
    const params: SqlParam[] = [...cells.flatMap((cell) => [cell.key, cell.intervalMs]), at, at, WINDOW_MS, at, at, at];
    const rows = await this.db.all<{ key: string; before: number | null; admitted: boolean }>(sql, params);
    const before = new Map<string, number>();
    for (const row of rows) if (row.before !== null) before.set(row.key, Number(row.before));
    return { admitted: rows[0]?.admitted === true, before };
  }

  /** Removes cells whose budget is full again: they hold nothing a fresh cell would not. */
  async forgetIdle(): Promise<void> {
    await this.db.run('DELETE FROM rate_limit_cells WHERE tat <= ?', [this.clock.now()]);
  }
}
