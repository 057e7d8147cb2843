import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import mysql from 'mysql2/promise';
import type { ConnectorSettings } from '../../src/service/connectors/types.js';
import { freePort } from './postgres.js';

/** The machine's MariaDB (or MySQL): root without a password on 127.0.0.1:3306 unless LAKE_TEST_MYSQL_URL says. */
export const MYSQL_ADMIN_URL = process.env.LAKE_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

export interface TestMysqlDatabase {
  host: string;
  port: number;
  database: string;
  /** A user that may only SELECT in the database, with no password. */
  reader: string;
  /** Runs statements (several, separated by semicolons) in the database as the administrator. */
  query(sql: string): Promise<unknown[]>;
  drop(): Promise<void>;
}

/** A source's settings that reach the test database as its reader (for lake's own connections, mysqlConnection). */
export function readerSettings(db: TestMysqlDatabase): ConnectorSettings {
  return { config: { port: db.port, database: db.database }, secrets: { host: db.host, user: db.reader }, tables: [] };
}

/** Where and as whom a test runs statements as a server's administrator. */
interface AdminLogin {
  host: string;
  port: number;
  user: string;
  password?: string;
  /** The database a statement runs in when it names none. */
  database?: string;
}

const MACHINE_ADMIN: AdminLogin = (() => {
  const url = new URL(MYSQL_ADMIN_URL);
  return {
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username || 'root'),
    password: decodeURIComponent(url.password),
    database: url.pathname.slice(1) || undefined,
  };
})();

/** Runs statements (several, separated by semicolons) on a connection of its own, in `database` when given. */
async function runAsAdmin(login: AdminLogin, sql: string, database?: string): Promise<unknown[]> {
  const connection = await mysql.createConnection({
    ...login,
    database: database ?? login.database,
    multipleStatements: true,
    // Every number exactly, as text: BIGINT and DECIMAL beyond what a JavaScript number holds.
    supportBigNumbers: true,
    bigNumberStrings: true,
    timezone: 'Z',
  });
  try {
    // Zero dates and other values strict modes refuse are what a source may hold.
    await connection.query("SET SESSION sql_mode = '', time_zone = '+00:00'");
    const [rows] = await connection.query(sql);
    return rows as unknown[];
  } finally {
    await connection.end();
  }
}

/** A uniquely named database with a reader user, made before the file's tests and dropped after them. */
export function useTestMysqlDatabase(): TestMysqlDatabase {
  const tag = randomBytes(4).toString('hex');
  const database = `lake_test_${tag}`;
  const reader = `lake_reader_${tag}`;
  const run = (sql: string, inDatabase?: string): Promise<unknown[]> => runAsAdmin(MACHINE_ADMIN, sql, inDatabase);
  beforeAll(async () => {
    await run(
      `CREATE DATABASE ${database} CHARACTER SET utf8mb4; CREATE USER '${reader}'@'%'; GRANT SELECT ON ${database}.* TO '${reader}'@'%'`,
    );
  }, 60_000);
  afterAll(async () => {
    await run(`DROP DATABASE IF EXISTS ${database}; DROP USER IF EXISTS '${reader}'@'%'`);
  });
  return {
    host: MACHINE_ADMIN.host,
    port: MACHINE_ADMIN.port,
    database,
    reader,
    query: (sql) => run(sql, database),
    drop: async () => void (await run(`DROP DATABASE IF EXISTS ${database}`)),
  };
}

/** A MariaDB server of a test's own, with the binary log on in row format (`--log-bin --binlog-format=ROW`). */
export interface PrivateMariadb {
  host: string;
  port: number;
  /** Runs statements (several, separated by semicolons) as root, in `database` when given. */
  query(sql: string, database?: string): Promise<unknown[]>;
  stop(): Promise<void>;
}

/**
 * Starts a MariaDB server in a temporary directory on a free port, root without a password, binary log in row
 * format with whole row images; `settings` are more server options (`--binlog-format=STATEMENT`, say).
 */
export async function startPrivateMariadb(settings: readonly string[] = []): Promise<PrivateMariadb> {
  const dir = mkdtempSync(join(tmpdir(), 'lake-mariadb-'));
  const port = await freePort();
  execFileSync(
    'mariadb-install-db',
    [
      '--no-defaults',
      `--datadir=${join(dir, 'data')}`,
      '--user=root',
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
    ],
    { stdio: 'ignore' },
  );
  const server = spawn(
    'mariadbd',
    [
      '--no-defaults',
      '--user=root',
      `--datadir=${join(dir, 'data')}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--socket=${join(dir, 'socket')}`,
      `--pid-file=${join(dir, 'pid')}`,
      `--log-bin=${join(dir, 'data', 'binlog')}`,
      '--binlog-format=ROW',
      '--server-id=1',
      '--skip-name-resolve',
      '--innodb-buffer-pool-size=64M',
      '--innodb-log-file-size=16M',
      '--innodb-flush-log-at-trx-commit=2',
      ...settings,
    ],
    { stdio: 'ignore' },
  );
  const query = (sql: string, database?: string): Promise<unknown[]> =>
    runAsAdmin({ host: '127.0.0.1', port, user: 'root' }, sql, database);
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await query('SELECT 1');
      break;
    } catch (error) {
      if (Date.now() > deadline || server.exitCode !== null) {
        server.kill('SIGKILL');
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    host: '127.0.0.1',
    port,
    query,
    async stop() {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGKILL');
      if (server.exitCode === null) await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
