import type * as mysql from 'mysql2';
import { endMysql, mysqlConnection, mysqlQuery } from '../connectors/mysql.js';
import type { ConnectorSettings } from '../connectors/types.js';
import { mysqlIdent } from './mysql-types.js';
import { MIN_RANGE_BYTES } from './table-ranges.js';

/** How long the tables' read lock is waited for before the sync reads over one connection instead (seconds). */
const LOCK_WAIT_SECONDS = 1;

const START_SNAPSHOT = 'START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY';

/** A connection of a sync's: UTC, and its next transaction REPEATABLE READ. */
export async function prepareSession(connection: mysql.Connection): Promise<void> {
  await mysqlQuery(connection, "SET SESSION time_zone = '+00:00'");
  await mysqlQuery(connection, 'SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
}

async function connected(settings: ConnectorSettings): Promise<mysql.Connection> {
  const connection = mysqlConnection(settings);
  try {
    await new Promise<void>((resolve, reject) => connection.connect((error) => (error ? reject(error) : resolve())));
    return connection;
  } catch (error) {
    connection.destroy();
    throw error;
  }
}

/**
 * Starts the leader's snapshot and, where the source allows, `extra` more connections' at the same point in time.
 * MySQL cannot hand a snapshot to another connection (PostgreSQL exports one), so the snapshots are made to agree
 * as mydumper does: one more connection holds `LOCK TABLES … READ` on the tables the sync reads, which waits for
 * every transaction writing them to end and holds back new ones; every reader then starts its consistent snapshot
 * (`START TRANSACTION WITH CONSISTENT SNAPSHOT`), and the lock is let go. No write to those tables can commit
 * between the first snapshot and the last, so all of them see the same rows. The lock needs the LOCK TABLES
 * privilege and is waited for at most a second (a long write transaction, which the waiting lock would hold new
 * writes behind); without it the sync reads over the leader alone, as before. Answers the extra connections
 * (none on that fallback), each ready to read; the caller ends them.
 */
export async function startSnapshots(
  settings: ConnectorSettings,
  leader: mysql.Connection,
  tables: readonly { schema: string; name: string }[],
  extra: number,
): Promise<mysql.Connection[]> {
  if (extra < 1 || tables.length === 0) {
    await mysqlQuery(leader, START_SNAPSHOT);
    return [];
  }
  const opened: mysql.Connection[] = [];
  let lock: mysql.Connection | undefined;
  try {
    lock = await connected(settings);
    for (let i = 0; i < extra; i++) {
      const reader = await connected(settings);
      opened.push(reader);
      await prepareSession(reader);
    }
    await mysqlQuery(lock, `SET SESSION lock_wait_timeout = ${LOCK_WAIT_SECONDS}`);
    await mysqlQuery(
      lock,
      `LOCK TABLES ${tables.map((t) => `${mysqlIdent(t.schema)}.${mysqlIdent(t.name)} READ`).join(', ')}`,
    );
  } catch {
    // No second connection, no privilege to lock, or a writer holding the tables: one connection reads them all.
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
  /** The smallest range worth a connection (MIN_RANGE_BYTES; a test splits small tables). */
  minRangeBytes = MIN_RANGE_BYTES,
): Promise<string[]> {
  const whole = [''];
  const [key] = table.primaryKey;
  if (connections < 2 || table.primaryKey.length !== 1 || key === undefined || !isIntegerType(keyType)) return whole;
  const [size] = await mysqlQuery(
    connection,
    'SELECT DATA_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?',
    [table.schema, table.name],
  );
  const bytes = Number(size?.[0] ?? 0);
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

const isIntegerType = (dataType: string | undefined): boolean =>
  dataType !== undefined && /^(tinyint|smallint|mediumint|int|integer|bigint)$/.test(dataType);
