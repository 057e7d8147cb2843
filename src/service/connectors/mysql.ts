import type { Duplex } from 'node:stream';
import type * as mysql from 'mysql2';
import { mysqlDriver } from '../../support/source-drivers.js';
import type { Connector, ConnectionTest, ConnectorSettings, SourceTable, TestFailure } from './types.js';
import { DISCOVERY_DEFAULTS } from './postgres.js';
import { connectionFields, DELETES_FIELD, SSL_MODE_FIELD, SYNC_CONNECTIONS_FIELD } from './database-fields.js';
import {
  limitMessages,
  MAX_DISCOVERY_BYTES,
  messageBound,
  WireLimitExceeded,
  type MessageBound,
} from './wire-limits.js';

const CONNECT_TIMEOUT_MS = 5000;
const QUERY_TIMEOUT_MS = 10_000;

type DiscoveredTable = Omit<SourceTable, 'enabled' | 'mode' | 'cursorColumn'>;

/**
 * How lake connects to a MySQL source, for its own connections and the binary log reader's: to the address the
 * outbound rules allowed, LOAD DATA LOCAL off, one statement per query, UTC.
 */
export function mysqlOptions(settings: ConnectorSettings): mysql.ConnectionOptions {
  const sslMode = String(settings.config.ssl_mode ?? 'disable');
  const named = settings.secrets.host;
  const pinned = settings.connectHost ?? named;
  if (!pinned || !settings.secrets.user)
    throw Object.assign(new Error('the source has no host or user'), { code: 'ENOTFOUND' });
  return {
    host: pinned,
    port: Number(settings.config.port ?? 3306),
    database: String(settings.config.database),
    user: settings.secrets.user,
    password: settings.secrets.password ?? '',
    connectTimeout: CONNECT_TIMEOUT_MS,
    // Not offered, and a server that asks anyway gets no file: without a stream factory mysql2 answers an empty one
    // and fails the statement (a factory that threw would throw inside the driver's protocol handler).
    flags: ['-LOCAL_FILES'],
    multipleStatements: false,
    charset: 'utf8mb4',
    timezone: 'Z',
    // Connected by address, a verified TLS session still checks the certificate against the name given.
    ...(sslMode === 'disable'
      ? {}
      : {
          ssl:
            sslMode === 'verify-full'
              ? { rejectUnauthorized: true, ...(pinned !== named && named ? { servername: named } : {}) }
              : { rejectUnauthorized: false },
        }),
  };
}

/**
 * A connection to a MySQL or MariaDB source; mysql2 is loaded only by what reaches one. The connection is the
 * tenant's alone, and a source server may be hostile: LOAD DATA LOCAL is off (a server may otherwise ask the client
 * for any file it can read, this server's secrets included), one statement per query, and every value arrives as
 * text (lake's SQL says how each column travels, mysql-types.ts).
 */
export function mysqlConnection(settings: ConnectorSettings, catalogOnly = false): mysql.Connection {
  const driver = mysqlDriver();
  const connection = driver.createConnection({
    ...mysqlOptions(settings),
    // Text for every value: numbers beyond JavaScript's, dates before year 1000 and zero dates arrive exactly.
    typeCast: false,
    rowsAsArray: true,
  });
  // A failed connection emits 'error' too; without a listener that would end the process.
  connection.on('error', () => {});
  limitMysqlMessages(connection, messageBound(settings, { catalogOnly }));
  return connection;
}

/**
 * Bounds every packet the server sends, a packet continued in 16 MiB parts counted whole (wire-limits.ts); for
 * lake's own connections and the binary log reader's. mysql2 moves a connection to TLS by taking every listener off
 * its socket and reading from a TLS socket instead: the watch follows it there.
 */
export function limitMysqlMessages(connection: mysql.Connection, bound: MessageBound): void {
  const socket = socketOf(connection);
  const watch = limitMessages(socket, 'mysql', bound);
  const follow = (event: string | symbol, listener: unknown): void => {
    if (event !== 'data' || listener !== watch) return;
    socket.off('removeListener', follow);
    // The TLS socket is in place once the synchronous swap that removed the watch is over.
    process.nextTick(() => {
      const secure = socketOf(connection);
      if (secure !== socket && !secure.destroyed) limitMessages(secure, 'mysql', bound);
    });
  };
  socket.on('removeListener', follow);
}

/**
 * A MySQL identifier quoted whole. mysql2's `??` placeholder splits a name at its dots (`x.y` becomes `x`.`y`), so
 * a table named with a dot would be read as another; names are quoted with this instead.
 */
export const mysqlIdent = (name: string): string => `\`${name.replace(/`/g, '``')}\``;

/** mysql2's socket under a connection (the TLS one once swapped in); its typings do not name it. */
function socketOf(connection: mysql.Connection): Duplex {
  return (connection as unknown as { stream: Duplex }).stream;
}

/**
 * Runs one statement; the rows come as arrays of text (mysqlConnection's settings). Every statement lake runs this
 * way returns a few rows of a catalog or a plan, so what the server sends while it runs is bounded as a discovery's
 * bytes are: a server that answers with more (a hostile one, ignoring the statement's LIMIT) has the connection ended
 * instead of filling memory with rows the driver collects whole.
 */
export function mysqlQuery(
  connection: mysql.Connection,
  sql: string,
  values: unknown[] = [],
  timeout?: number,
): Promise<(string | null)[][]> {
  const socket = socketOf(connection);
  let received = 0;
  const count = (chunk: Buffer): void => {
    received += chunk.length;
    if (received > MAX_DISCOVERY_BYTES && !socket.destroyed)
      socket.destroy(new WireLimitExceeded('the source answered a statement with more than lake reads'));
  };
  socket.on('data', count);
  // The time bound is lake's own: mysql2's `timeout` option leaves its timer running when a statement fails another
  // way (a server that breaks the protocol), which kept a finished `lake` command or a stopped `lake serve` alive for
  // the rest of it. Past the bound the connection is closed, and the driver fails the statement.
  const timer =
    timeout === undefined
      ? undefined
      : setTimeout(() => {
          if (!socket.destroyed)
            socket.destroy(Object.assign(new Error('Query inactivity timeout'), { code: 'PROTOCOL_SEQUENCE_TIMEOUT' }));
        }, timeout);
  return new Promise((resolve, reject) => {
    connection.query({ sql, values }, (error, rows) => {
      clearTimeout(timer);
      socket.removeListener('data', count);
      if (error) reject(error);
      else resolve(rows as (string | null)[][]);
    });
  });
}

/**
 * Ends a connection, whatever state it is in: a goodbye the server does not answer (a connection that failed or was
 * closed under it never calls back) is cut short, so the caller never waits for ever.
 */
export function endMysql(connection: mysql.Connection): Promise<void> {
  return new Promise<void>((resolve) => {
    const cut = setTimeout(() => {
      connection.destroy();
      resolve();
    }, 1000);
    connection.end((error) => {
      clearTimeout(cut);
      // A connection that cannot say goodbye is closed anyway.
      if (error) connection.destroy();
      resolve();
    });
  });
}

/**
 * Reduces a driver failure to the fixed vocabulary. Driver messages name hosts, users and databases, so they are
 * never passed on, not even to the log.
 */
export function classifyMysqlFailure(error: unknown): TestFailure {
  const e = error as { code?: string; message?: string };
  switch (e.code) {
    case 'ER_ACCESS_DENIED_ERROR':
    case 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR':
    case 'ER_NOT_SUPPORTED_AUTH_MODE':
      return 'authentication_failed';
    case 'ER_BAD_DB_ERROR':
      return 'database_not_found';
    case 'ER_DBACCESS_DENIED_ERROR':
    case 'ER_TABLEACCESS_DENIED_ERROR':
    case 'ER_COLUMNACCESS_DENIED_ERROR':
    case 'ER_SPECIFIC_ACCESS_DENIED_ERROR':
      return 'permission_denied';
    case 'HANDSHAKE_NO_SSL_SUPPORT':
    case 'ER_SECURE_TRANSPORT_REQUIRED':
      return 'tls_required';
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EAI_AGAIN':
    case 'ECONNRESET':
    case 'PROTOCOL_CONNECTION_LOST':
      return 'unreachable';
    case 'ETIMEDOUT':
    case 'PROTOCOL_SEQUENCE_TIMEOUT':
      return 'timeout';
    default:
      if (/timeout/i.test(e.message ?? '')) return 'timeout';
      return 'unknown';
  }
}

/**
 * Tables, columns, types and primary keys of the source's database from information_schema, bounded as a
 * PostgreSQL source's discovery is (LAKE_SOURCE_MAX_TABLES, LAKE_SOURCE_MAX_COLUMNS). A MySQL database is the
 * source's one schema. Its tables are the base tables and MariaDB's system-versioned ones (read as a SELECT reads
 * them: their current rows); views and sequences are not tables to sync.
 */
async function discoverWith(connection: mysql.Connection, settings: ConnectorSettings): Promise<DiscoveredTable[]> {
  const { maxTables, maxColumns } = settings.discovery ?? DISCOVERY_DEFAULTS;
  // Names equal but for case are ordered by their bytes (`T` before `t`): the same one gets the plain lake name at
  // every discovery, and the limit always keeps the same tables.
  const tables = await mysqlQuery(
    connection,
    `SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED')
      ORDER BY TABLE_NAME, CAST(TABLE_NAME AS BINARY) LIMIT ?`,
    [maxTables],
    QUERY_TIMEOUT_MS,
  );
  // One pass over the schema's columns. A count per table in a subquery made the server scan them once per table
  // (47 s for 1,000 tables), and compared the names case-insensitively, so tables `T` and `t` counted each other's;
  // grouped by the names' bytes, each keeps its own (MIN is the group's one name; MariaDB has no ANY_VALUE).
  const counts = await mysqlQuery(
    connection,
    `SELECT MIN(TABLE_NAME), count(*) FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = DATABASE() GROUP BY CAST(TABLE_NAME AS BINARY)`,
    [],
    QUERY_TIMEOUT_MS,
  );
  const columnCounts = new Map(counts.map(([name, count]) => [String(name), Number(count)]));
  let budget = maxColumns;
  const found = new Map<string, DiscoveredTable>();
  const described = new Set<string>();
  for (const [schema, name, rows] of tables.slice(0, maxTables)) {
    const columnCount = columnCounts.get(String(name)) ?? 0;
    found.set(String(name), {
      schema: String(schema),
      name: String(name),
      columns: [],
      columnCount,
      primaryKey: [],
      estimatedRows: rows === null ? null : Number(rows),
    });
    if (columnCount <= budget) {
      budget -= columnCount;
      described.add(String(name));
    }
  }
  if (described.size === 0) return [...found.values()];
  const columns = await mysqlQuery(
    connection,
    `SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE = 'YES', COLUMN_KEY = 'PRI'
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (?)
      ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    [[...described]],
    QUERY_TIMEOUT_MS,
  );
  let kept = 0;
  for (const [table, column, type, nullable] of columns) {
    // A list of names is matched case-insensitively too: a namesake not described answers as well.
    const entry = described.has(String(table)) ? found.get(String(table)) : undefined;
    if (!entry || kept >= maxColumns) continue;
    entry.columns.push({ name: String(column), type: String(type), nullable: String(nullable) === '1' });
    kept++;
  }
  const keys = await mysqlQuery(
    connection,
    `SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
      WHERE TABLE_SCHEMA = DATABASE() AND CONSTRAINT_NAME = 'PRIMARY' AND TABLE_NAME IN (?)
      ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    [[...described]],
    QUERY_TIMEOUT_MS,
  );
  for (const [table, column] of keys) {
    const entry = described.has(String(table)) ? found.get(String(table)) : undefined;
    // MariaDB puts a system-versioned table's row_end in each of its keys, a column no SELECT reads (the table's
    // current rows are unique without it): the key is the table's own columns.
    if (
      entry &&
      (entry.columns.length < (entry.columnCount ?? 0) || entry.columns.some((c) => c.name === String(column)))
    )
      entry.primaryKey.push(String(column));
  }
  return [...found.values()];
}

/** A connection opened to the source (mysqlConnection's settings); one that never opened is destroyed. */
export async function connectMysql(settings: ConnectorSettings, catalogOnly = false): Promise<mysql.Connection> {
  const connection = mysqlConnection(settings, catalogOnly);
  try {
    await new Promise<void>((resolve, reject) => connection.connect((error) => (error ? reject(error) : resolve())));
    return connection;
  } catch (error) {
    // A connection that never opened has nobody to say goodbye to.
    connection.destroy();
    throw error;
  }
}

/** Work on a connection of its own, ended after; `catalogOnly` (a test, a discovery) bounds all it may receive. */
export async function withMysql<T>(
  settings: ConnectorSettings,
  work: (connection: mysql.Connection) => Promise<T>,
  catalogOnly = false,
): Promise<T> {
  const connection = await connectMysql(settings, catalogOnly);
  try {
    return await work(connection);
  } finally {
    // The work's own result or failure is what the caller gets; a failed goodbye changes neither.
    await endMysql(connection);
  }
}

/** Tables whose SELECT one statement checks (each a `SELECT … LIMIT 0` in a UNION): a few hundred opened at once. */
const PRIVILEGE_CHECK_BATCH = 200;

/**
 * Whether the session may SELECT from every table: a UNION of `SELECT 1 … LIMIT 0` per table (a statement that
 * reads no rows, and fails if any table is missing or not readable), a batch of tables a round trip. A statement
 * per table was a round trip each: a source of 2,000 tables across a 20 ms link took 40 s to test.
 */
async function mayReadAll(
  connection: mysql.Connection,
  tables: readonly { schema: string; name: string }[],
): Promise<boolean> {
  for (let start = 0; start < tables.length; start += PRIVILEGE_CHECK_BATCH) {
    const batch = tables.slice(start, start + PRIVILEGE_CHECK_BATCH);
    const sql = batch
      .map((t) => `(SELECT 1 FROM ${mysqlIdent(t.schema)}.${mysqlIdent(t.name)} LIMIT 0)`)
      .join(' UNION ALL ');
    const readable = await mysqlQuery(connection, sql, [], QUERY_TIMEOUT_MS).then(
      () => true,
      (error: unknown) => {
        // A table not readable, or gone since discovery; anything else (a timeout, a lost connection) is the
        // test's failure and keeps its own reason.
        if (
          classifyMysqlFailure(error) === 'permission_denied' ||
          (error as { code?: string }).code === 'ER_NO_SUCH_TABLE'
        )
          return false;
        throw error;
      },
    );
    if (!readable) return false;
  }
  return true;
}

/**
 * Connects live, runs a trivial query, discovers the tables, and checks SELECT on every table the source syncs
 * (a SELECT of no rows: MySQL's privileges come from several tables and roles). The answer is ok, or one generic
 * reason.
 */
async function testMysql(settings: ConnectorSettings): Promise<ConnectionTest> {
  try {
    return await withMysql(
      settings,
      async (connection) => {
        await mysqlQuery(connection, 'SELECT 1', [], QUERY_TIMEOUT_MS);
        const tables = await discoverWith(connection, settings);
        const wanted = settings.tables.filter((t) => t.enabled);
        const allowed = await mayReadAll(connection, wanted.length > 0 ? wanted : tables);
        if (!allowed) return { ok: false, reason: 'permission_denied' as const, tables };
        return { ok: true, reason: null, tables };
      },
      true,
    );
  } catch (error) {
    return { ok: false, reason: classifyMysqlFailure(error) };
  }
}

export const mysqlConnector: Connector = {
  name: 'mysql',
  title: 'MySQL and MariaDB',
  auth: 'key',
  syncs: true,
  staffOnly: false,
  fields: [
    ...connectionFields({
      user: 'user to connect as (SELECT on the tables is enough)',
      password: "the user's password",
      port: 3306,
      database: 'database (schema) to discover and sync',
    }),
    SYNC_CONNECTIONS_FIELD,
    DELETES_FIELD,
    SSL_MODE_FIELD,
  ],
  tableModes: { cdc: true, detectDeletes: true },
  test: testMysql,
  discover: (settings) => withMysql(settings, (connection) => discoverWith(connection, settings), true),
};
