import { afterAll, beforeAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { writeSelfSigned } from './certificates.js';
import { join } from 'node:path';
import pg from 'pg';

export const ADMIN_URL = process.env.LAKE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A port nothing listens on (taken, then released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

export async function adminQuery(sql: string, database?: string): Promise<pg.QueryResult> {
  const url = new URL(ADMIN_URL);
  if (database) url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  host: string;
  port: number;
  database: string;
  /** Reads every table. */
  reader: string;
  /** Connects, but may not read public.orders. */
  limited: string;
  drop(): Promise<void>;
}

/**
 * A uniquely named database on the machine's PostgreSQL (LAKE_TEST_PG_URL), with two tables and two roles, and the
 * means to drop it all afterwards. Role names are distinctive so tests can search responses and logs for them.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const tag = randomBytes(4).toString('hex');
  const database = `lake_test_${tag}`;
  const reader = `lake_reader_${tag}`;
  const limited = `lake_limited_${tag}`;
  await adminQuery(`CREATE DATABASE ${database}`);
  await adminQuery(`CREATE ROLE ${reader} LOGIN; CREATE ROLE ${limited} LOGIN`);
  await adminQuery(
    `CREATE TABLE public.customers (customer_id integer PRIMARY KEY, name text NOT NULL, email text);
     INSERT INTO public.customers SELECT g, 'customer ' || g, 'c' || g || '@example.com' FROM generate_series(1, 50) g;
     CREATE TABLE public.orders (order_id bigint PRIMARY KEY, customer_id integer NOT NULL, total numeric(10,2), updated_at timestamptz NOT NULL DEFAULT now());
     INSERT INTO public.orders SELECT g, 1 + g % 50, g * 1.5, now() FROM generate_series(1, 200) g;
     ANALYZE;
     GRANT USAGE ON SCHEMA public TO ${reader}, ${limited};
     GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${reader};
     GRANT SELECT ON public.customers TO ${limited};`,
    database,
  );
  const url = new URL(ADMIN_URL);
  return {
    host: 'localhost',
    port: Number(url.port || 5432),
    database,
    reader,
    limited,
    async drop() {
      await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await adminQuery(`DROP ROLE IF EXISTS ${reader}; DROP ROLE IF EXISTS ${limited}`);
    },
  };
}

/**
 * A test database made before the file's tests and dropped after them. The object is filled in by beforeAll, so a
 * file can name it at the top and use it in its tests.
 */
export function useTestDatabase(): TestDatabase {
  const db = {} as TestDatabase;
  beforeAll(async () => {
    Object.assign(db, await createTestDatabase());
  }, 60_000);
  afterAll(async () => {
    await db.drop?.();
  });
  return db;
}

export interface PasswordServer {
  port: number;
  user: string;
  password: string;
  stop(): Promise<void>;
}

const PG_BIN = ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/17/bin'].find((dir) =>
  existsSync(join(dir, 'initdb')),
);

/**
 * A private PostgreSQL cluster that checks passwords (scram-sha-256), since the machine's server trusts every
 * local connection and so cannot show a wrong password failing. Runs as the postgres user; gone after stop().
 */
export async function startPasswordServer(): Promise<PasswordServer> {
  if (!PG_BIN) throw new Error('PostgreSQL server binaries (initdb) are not installed');
  const dir = mkdtempSync(join(tmpdir(), 'lake-pgpw-'));
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, `${password}\n`);
  const port = await freePort();
  const asPostgres = (cmd: string, args: string[]): void => {
    execFileSync('runuser', ['-u', 'postgres', '--', join(PG_BIN, cmd), ...args], { stdio: 'ignore' });
  };
  for (const path of [dir, pwfile])
    chownSync(
      path,
      Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
      Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
    );
  asPostgres('initdb', [
    '-D',
    join(dir, 'data'),
    '--auth=scram-sha-256',
    '--username=postgres',
    `--pwfile=${pwfile}`,
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  asPostgres('pg_ctl', [
    '-D',
    join(dir, 'data'),
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
    '-w',
    '-l',
    join(dir, 'log'),
    'start',
  ]);
  return {
    port,
    user: 'postgres',
    password,
    async stop() {
      asPostgres('pg_ctl', ['-D', join(dir, 'data'), '-m', 'immediate', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * An empty, uniquely named database on the machine's PostgreSQL for lake's metadata (LAKE_METADATA_URL), and the
 * means to drop it afterwards (connections of a process that was killed are ended first).
 */
export async function createMetadataDatabase(
  options: { migrated?: boolean } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  const database = `lake_meta_${randomBytes(5).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${database}${options.migrated ? ` TEMPLATE ${await migratedTemplate()}` : ''}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  return {
    url: url.toString(),
    async drop() {
      await adminQuery(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database}' AND pid <> pg_backend_pid()`,
      );
      await adminQuery(`DROP DATABASE IF EXISTS ${database}`);
    },
  };
}

let template: Promise<string> | undefined;

/**
 * A database with this build's metadata schema and nothing else, made once per test process: a copy of it costs
 * what an empty database does (~0.2 s on this machine), and spares each home the ~0.25 s of applying every
 * migration to an empty one. Nothing connects to it once it is migrated (PostgreSQL copies no database in use).
 */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const { openMetadataDb } = await import('../../src/service/store/database.js');
    const database = `lake_tmpl_${randomBytes(5).toString('hex')}`;
    await adminQuery(`CREATE DATABASE ${database}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${database}`;
    await (await openMetadataDb(url.toString())).close();
    return database;
  })();
  return template;
}

/** Drops this process's migrated template, if it made one (after the databases copied from it). */
export async function dropMigratedTemplate(): Promise<void> {
  const made = template;
  template = undefined;
  if (made) await adminQuery(`DROP DATABASE IF EXISTS ${await made}`);
}

/** What a cluster needs for logical replication (CDC): `startPrivatePostgres(LOGICAL_REPLICATION)`. */
export const LOGICAL_REPLICATION = ['wal_level=logical', 'max_replication_slots=4', 'max_wal_senders=4'];

export interface PrivatePostgres {
  url: string;
  /** Stops the server (fast shutdown: sessions are ended) and starts it again on the same port. */
  restart(downMs: number): Promise<void>;
  stop(): Promise<void>;
  /** The server's log (what `log_statement` writes, for a test that counts statements). */
  logFile: string;
}

/**
 * A PostgreSQL cluster of the test's own (trust auth, on a free port, with `settings` such as `wal_level=logical`),
 * for tests that must stop and start the server or change its settings (`tls`: with a self-signed certificate and
 * `ssl=on`): never the machine's shared one. Runs as the postgres user; gone after stop().
 */
export async function startPrivatePostgres(
  settings: readonly string[] = [],
  options: { tls?: boolean } = {},
): Promise<PrivatePostgres> {
  if (!PG_BIN) throw new Error('PostgreSQL server binaries (initdb) are not installed');
  const bin = PG_BIN;
  const dir = mkdtempSync(join(tmpdir(), 'lake-pgown-'));
  const port = await freePort();
  const asPostgres = (cmd: string, args: string[]): void => {
    execFileSync('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], { stdio: 'ignore' });
  };
  chownSync(
    dir,
    Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  );
  asPostgres('initdb', ['-D', join(dir, 'data'), '--auth=trust', '--username=postgres', '-E', 'UTF8', '--no-sync']);
  if (options.tls) {
    // Clients that ask for TLS without verifying the certificate (ssl_mode require) get it.
    writeSelfSigned(join(dir, 'data', 'server.key'), join(dir, 'data', 'server.crt'), 'postgres');
    settings = [...settings, 'ssl=on'];
  }
  const start = (): void =>
    asPostgres('pg_ctl', [
      '-D',
      join(dir, 'data'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off${settings.map((s) => ` -c ${s}`).join('')}`,
      '-w',
      '-l',
      join(dir, 'log'),
      'start',
    ]);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    logFile: join(dir, 'log'),
    async restart(downMs) {
      asPostgres('pg_ctl', ['-D', join(dir, 'data'), '-m', 'fast', '-w', 'stop']);
      await new Promise((resolve) => setTimeout(resolve, downMs));
      start();
    },
    async stop() {
      asPostgres('pg_ctl', ['-D', join(dir, 'data'), '-m', 'immediate', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A source cluster of a test file's own with logical replication (useLogicalSource). */
export interface LogicalSource {
  server: PrivatePostgres;
  /** A superuser session on it, for the test's changes at the source. */
  admin: pg.Client;
  port: number;
  /** The body of POST /sources for a PostgreSQL source of this cluster, as its superuser. */
  sourceBody(name: string, config?: Record<string, unknown>): Record<string, unknown>;
}

/**
 * A cluster with logical replication (startPrivatePostgres(LOGICAL_REPLICATION)) with `sql` run on it, started
 * before the file's (or describe block's) tests and stopped after them. Filled in by beforeAll; after hooks run in
 * reverse, so a harness made in a later beforeAll is closed before the cluster stops.
 */
export function useLogicalSource(sql: string): LogicalSource {
  const source = {} as LogicalSource;
  source.sourceBody = (name, config = {}) => ({
    connector: 'postgres',
    name,
    host: 'localhost',
    user: 'postgres',
    config: { port: source.port, database: 'postgres', ...config },
  });
  beforeAll(async () => {
    source.server = await startPrivatePostgres(LOGICAL_REPLICATION);
    source.port = Number(new URL(source.server.url).port);
    source.admin = new pg.Client({ connectionString: source.server.url });
    await source.admin.connect();
    await source.admin.query(sql);
  }, 120_000);
  afterAll(async () => {
    await source.admin?.end();
    await source.server?.stop();
  });
  return source;
}
