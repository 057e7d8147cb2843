/** SQLite's codes for a write with no room: the file could not grow, or its WAL index (`-shm`) could not. */
const SQLITE_FULL = new Set(['SQLITE_FULL', 'SQLITE_IOERR_SHMSIZE']);

/**
 * Whether an error says lake's own disk had no room for a write: Node's ENOSPC or EDQUOT, SQLite's (a metadata file
 * that cannot grow), or DuckDB's and SQLite's messages for the same ("No space left on device", "database or disk is
 * full"). Said as such instead of as a failure of the work, the SQL or lake itself. An error a database server sent
 * (PostgreSQL's carry a severity, MySQL's an SQL state) is about that server's disk, not lake's, and is not one.
 */
export function isDiskFull(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if ('severity' in error || 'sqlState' in error) return false;
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOSPC' || code === 'EDQUOT' || (typeof code === 'string' && SQLITE_FULL.has(code))) return true;
  return (
    error instanceof Error &&
    /No space left on device|Disk quota exceeded|database or disk is full/i.test(error.message)
  );
}
