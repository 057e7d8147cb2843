import type { LockName, MetadataDb, SqlParam } from './metadata-db.js';

/** The number a `SELECT count(*) AS n …` answers (PostgreSQL's bigint arrives as text). */
export async function countRows(db: MetadataDb, sql: string, params: readonly SqlParam[]): Promise<number> {
  const row = await db.get<{ n: number | string }>(sql, params);
  return Number(row?.n ?? 0);
}

/**
 * Runs fn with a count, in one transaction under `lockName`, so what fn decides from it (adding one more within a
 * ceiling) still holds when two requests decide at once, in this process or another replica.
 */
export function withCount<T>(
  db: MetadataDb,
  lockName: LockName,
  sql: string,
  params: readonly SqlParam[],
  fn: (count: number) => Promise<T>,
): Promise<T> {
  return db.transaction(lockName, async () => fn(await countRows(db, sql, params)));
}
