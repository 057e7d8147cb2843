import type * as mysql from 'mysql2';
import { connectMysql, endMysql, mysqlQuery } from '../connectors/mysql.js';
import type { ConnectorSettings } from '../connectors/types.js';
import { DISCARD_BYTES, DISCARD_MS, IGNORED_STOP } from './abandoned-reads.js';
import type { RecordStream } from './mysql-records.js';

/** How long the kill's own statement may take. */
const KILL_MS = 2_000;

/**
 * Frees a connection whose rows a reader gave up on part-way (a staging cap, a full disk), so that it can read the
 * next table in the same snapshot. MySQL has no cancel request: the statement is killed from a connection of its own
 * (`KILL QUERY`, which a user may do to its own sessions; the transaction and its snapshot stay open), while the rows
 * still on their way are read and dropped (recordStream). Without the kill, the whole rest of the table would be read
 * to be thrown away, and the next table's statements would be counted against what a catalog statement may receive.
 * Returns once the statement has ended, so the kill cannot reach the next statement; a server that keeps sending
 * past the bounds (abandoned-reads.ts) has its connection closed (`close`, which fails the sync with that reason).
 */
export async function stopAbandonedRead(
  records: RecordStream,
  on: mysql.Connection,
  settings: ConnectorSettings,
  close: (why: string) => void,
): Promise<void> {
  let over = false;
  void records.ended.then(() => (over = true));
  await Promise.resolve();
  // A connection already closed (a cancel, a bound, the server gone) sends nothing more and runs nothing next.
  if (over || (on as unknown as { stream: { destroyed: boolean } }).stream.destroyed) return;
  const thread = (on as unknown as { threadId?: number | null }).threadId;
  if (typeof thread === 'number') await killQuery(settings, thread);
  const deadline = Date.now() + DISCARD_MS;
  while (!over) {
    if (Date.now() > deadline || records.discarded() > DISCARD_BYTES) {
      close(IGNORED_STOP);
      await records.ended;
      return;
    }
    await Promise.race([records.ended, new Promise((resolve) => setTimeout(resolve, 50))]);
  }
}

/** `KILL QUERY` of a session, from a connection of its own; a failure to kill leaves the rows to be drained. */
async function killQuery(settings: ConnectorSettings, thread: number): Promise<void> {
  const connection = await connectMysql(settings, true).catch(() => undefined);
  if (!connection) return;
  try {
    await mysqlQuery(connection, `KILL QUERY ${thread}`, [], KILL_MS);
  } catch {
    // Gone meanwhile, or not allowed: the rows are read to their end, within the bounds.
  } finally {
    await endMysql(connection);
  }
}
