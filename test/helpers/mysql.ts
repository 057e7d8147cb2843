import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import mysql from 'mysql2/promise';

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

async function adminConnection(database?: string): Promise<mysql.Connection> {
  const url = new URL(MYSQL_ADMIN_URL);
  return mysql.createConnection({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username || 'root'),
    password: decodeURIComponent(url.password),
    database: database ?? (url.pathname.slice(1) || undefined),
    multipleStatements: true,
    // Every number exactly, as text: BIGINT and DECIMAL beyond what a JavaScript number holds.
    supportBigNumbers: true,
    bigNumberStrings: true,
    // Zero dates and other values strict modes refuse are what a source may hold.
    timezone: 'Z',
  });
}

/** A uniquely named database with a reader user, made before the file's tests and dropped after them. */
export function useTestMysqlDatabase(): TestMysqlDatabase {
  const tag = randomBytes(4).toString('hex');
  const database = `lake_test_${tag}`;
  const reader = `lake_reader_${tag}`;
  const url = new URL(MYSQL_ADMIN_URL);
  const run = async (sql: string, inDatabase?: string): Promise<unknown[]> => {
    const connection = await adminConnection(inDatabase);
    try {
      await connection.query("SET SESSION sql_mode = '', time_zone = '+00:00'");
      const [rows] = await connection.query(sql);
      return rows as unknown[];
    } finally {
      await connection.end();
    }
  };
  beforeAll(async () => {
    await run(
      `CREATE DATABASE ${database} CHARACTER SET utf8mb4; CREATE USER '${reader}'@'%'; GRANT SELECT ON ${database}.* TO '${reader}'@'%'`,
    );
  }, 60_000);
  afterAll(async () => {
    await run(`DROP DATABASE IF EXISTS ${database}; DROP USER IF EXISTS '${reader}'@'%'`);
  });
  return {
    host: url.hostname,
    port: Number(url.port || 3306),
    database,
    reader,
    query: (sql) => run(sql, database),
    drop: async () => void (await run(`DROP DATABASE IF EXISTS ${database}`)),
  };
}
