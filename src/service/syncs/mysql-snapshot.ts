import type * as mysql from 'mysql2';
import { connectMysql, endMysql, mysqlIdent, mysqlQuery } from '../connectors/mysql.js';
import type { ConnectorSettings } from '../connectors/types.js';
import { MIN_RANGE_BYTES } from './table-ranges.js';

/** How long the tables' read lock is waited for before the sync reads over one connection instead (seconds). */
const LOCK_WAIT_SECONDS = 1;

const START_SNAPSHOT = 'START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY';

/** The longest net_write_timeout MySQL and MariaDB take (a year, in seconds). */
const MAX_NET_WRITE_TIMEOUT = 31_536_000;

/**
 * A connection of a sync's: UTC, its next transaction REPEATABLE READ, and the server's wait for a reader that
 * takes nothing as long as lake's own idle bound. A read pauses while the sync's loads catch up (or the table before
 * commits); at the server's default of 60 s (net_write_timeout) a longer pause would end the statement, and the
 * table with it, as mydumper raises it for the same reason.
 */
export async function prepareSession(connection: mysql.Connection, idleTimeoutMs: number): Promise<void> {
  const seconds = Math.min(MAX_NET_WRITE_TIMEOUT, Math.max(60, Math.ceil(idleTimeoutMs / 1000)));
  await mysqlQuery(connection, `SET SESSION time_zone = '+00:00', SESSION net_write_timeout = ${seconds}`);
  await mysqlQuery(connection, 'SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
}

/**
 * Starts the leader's snapshot and, where the source allows, `extra` more connections' at the same point in time.
 * MySQL cannot hand a snapshot to another connection (PostgreSQL exports one), so the snapshots are made to agree
 * as mydumper does: one more connection holds `LOCK TABLES … READ` on the tables the sync reads, which waits for
 * every transaction writing them to end and holds back new ones; every reader then starts its consistent snapshot
 * (`START TRANSACTION WITH CONSISTENT SNAPSHOT`), and the lock is let go. No write to those tables can commit
 * between the first snapshot and the last, so all of them see the same rows. The lock needs the LOCK TABLES
 * privilege and is waited for at most a second (a long write transaction, which the waiting lock would hold new
 * writes behind); without it the sync reads over the leader alone, as before. Every connection opened here is
 * bounded by `bound` while it is set up (a source that lets it in and then says nothing ends it as it would the
 * leader), and the bounds are let go before this returns. Answers the extra connections (none on that fallback),
 * each ready to read; the caller ends them.
 */
export async function startSnapshots(
  settings: ConnectorSettings,
  leader: mysql.Connection,
  tables: readonly { schema: string; name: string }[],
  extra: number,
  /** Bounds a connection as the sync's are (idle, time, cancel); answers what lets the bound go. */
  bound: (connection: mysql.Connection) => () => void,
  /** Lake's idle bound on a source connection (prepareSession). */
  idleTimeoutMs: number,
): Promise<mysql.Connection[]> {
  if (extra < 1 || tables.length === 0) {
    await mysqlQuery(leader, START_SNAPSHOT);
    return [];
  }
  const opened: mysql.Connection[] = [];
  const unbound: (() => void)[] = [];
  const bounded = async (): Promise<mysql.Connection> => {
    const connection = await connectMysql(settings);
    unbound.push(bound(connection));
    return connection;
  };
  let lock: mysql.Connection | undefined;
  try {
    lock = await bounded();
    for (let i = 0; i < extra; i++) {
      const reader = await bounded();
      opened.push(reader);
      await prepareSession(reader, idleTimeoutMs);
    }
    await mysqlQuery(lock, `SET SESSION lock_wait_timeout = ${LOCK_WAIT_SECONDS}`);
    await mysqlQuery(
      lock,
      `LOCK TABLES ${tables.map((t) => `${mysqlIdent(t.schema)}.${mysqlIdent(t.name)} READ`).join(', ')}`,
    );
  } catch {
    // No second connection, no privilege to lock, a writer holding the tables, or a connection the source left
    // silent: one connection reads them all.
    for (const release of unbound) release();
    await Promise.all([...opened, ...(lock ? [lock] : [])].map(endMysql));
    await mysqlQuery(leader, START_SNAPSHOT);
    return [];
  }
  try {
    await Promise.all([leader, ...opened].map((connection) => mysqlQuery(connection, START_SNAPSHOT)));
    await mysqlQuery(lock, 'UNLOCK TABLES');
    return opened;
  } catch (error) {
    await Promise.all(opened.map(endMysql));
    throw error;
  } finally {
    for (const release of unbound) release();
    await endMysql(lock);
  }
}

/**
 * Splits a large table's full read into ranges of its primary key, one per connection, as conditions with their
 * values: only a single integer key (InnoDB keeps rows in its order, so each range is read in order, as the whole
 * table would be), and only a table of at least twice MIN_RANGE_BYTES. The key's lowest and highest values (two
 * index probes, in the reader's snapshot) are cut in even steps; the first range is open below and the last open
 * above, so together they hold every row once. One range, with no condition, otherwise.
 */
export async function keyRanges(
  connection: mysql.Connection,
  table: { schema: string; name: string; primaryKey: readonly string[] },
  keyType: string | undefined,
  connections: number,
  /** The table's size on disk (tableSizes). */
  bytes: number,
  /** The smallest range worth a connection (MIN_RANGE_BYTES; a test splits small tables). */
  minRangeBytes = MIN_RANGE_BYTES,
): Promise<string[]> {
  const whole = [''];
  const [key] = table.primaryKey;
  if (connections < 2 || table.primaryKey.length !== 1 || key === undefined || !isIntegerType(keyType)) return whole;
  const count = Math.min(connections, minRangeBytes > 0 ? Math.floor(bytes / minRangeBytes) : connections);
  if (count < 2) return whole;
  const column = mysqlIdent(key);
  const [bounds] = await mysqlQuery(
    connection,
    `SELECT CAST(MIN(${column}) AS CHAR), CAST(MAX(${column}) AS CHAR) FROM ${mysqlIdent(table.schema)}.${mysqlIdent(table.name)}`,
  );
  if (!bounds || bounds[0] === null || bounds[1] === null) return whole;
  const low = BigInt(String(bounds[0]));
  const high = BigInt(String(bounds[1]));
  const points = [
    ...new Set(Array.from({ length: count - 1 }, (_, i) => low + ((high - low) * BigInt(i + 1)) / BigInt(count))),
  ].filter((p) => p > low);
  if (points.length === 0) return whole;
  // Written as integer literals (digits of a BigInt): compared with a quoted parameter, MySQL would compare as
  // doubles, and a BIGINT past 2^53 could fall on the wrong side of its point.
  const text = points.map(String);
  return [
    `${column} < ${text[0]}`,
    ...text.slice(1).map((p, i) => `${column} >= ${text[i]} AND ${column} < ${p}`),
    `${column} >= ${text.at(-1)}`,
  ];
}

/**
 * The sizes on disk (information_schema's DATA_LENGTH) of the tables, by `schema.name`, read once for the sync: whether
 * any is worth more connections, and how many ranges each is read in (keyRanges). A table missing is 0.
 */
export async function tableSizes(
  connection: mysql.Connection,
  tables: readonly { schema: string; name: string }[],
): Promise<Map<string, number>> {
  if (tables.length === 0) return new Map();
  const rows = await mysqlQuery(
    connection,
    `SELECT TABLE_SCHEMA, TABLE_NAME, DATA_LENGTH FROM information_schema.TABLES
      WHERE (TABLE_SCHEMA, TABLE_NAME) IN (${tables.map(() => '(?, ?)').join(', ')})`,
    tables.flatMap((t) => [t.schema, t.name]),
  );
  return new Map(rows.map(([schema, name, bytes]) => [`${String(schema)}.${String(name)}`, Number(bytes ?? 0)]));
}

const isIntegerType = (dataType: string | undefined): boolean =>
  dataType !== undefined && /^(tinyint|smallint|mediumint|int|integer|bigint)$/.test(dataType);
