import type { Duplex } from 'node:stream';
import type pg from 'pg';
import { pgDriver } from '../../support/source-drivers.js';
import { LakeServiceError } from '../core/errors.js';
import type { Connector, ConnectionTest, ConnectorSettings, SourceTable, TestFailure } from './types.js';
import { connectionFields, DELETES_FIELD, SSL_MODE_FIELD, SYNC_CONNECTIONS_FIELD } from './database-fields.js';
import { limitedReader, messageBound, type MessageBound } from './wire-limits.js';

const CONNECT_TIMEOUT_MS = 5000;
const QUERY_TIMEOUT_MS = 10_000;

type DiscoveredTable = Omit<SourceTable, 'enabled' | 'mode' | 'cursorColumn'>;

/**
 * Client settings from a source's config and secrets; pg is loaded only by commands that reach PostgreSQL. Tests
 * and discovery get statement and query timeouts; a sync gets none: its COPY may rightly run for a long time, and
 * pg's per-query timer would outlive a COPY stream and hold the process open (a sync bounds its reads itself).
 *
 * The connection is the tenant's alone: node-postgres fills every setting it is not given (and a password it is
 * given as '') from the server's environment (PGPASSWORD, PGUSER, PGHOST, PGOPTIONS, PGSSLMODE …) and the server's
 * ~/.pgpass, which hold the server's own database credentials. So the client is built with no PG* variable in
 * sight, and the password is a function: pg then never reads .pgpass, and a source without a password answers a
 * server that asks for one with a failed authentication instead of the server's secret.
 */
export function postgresClient(
  settings: ConnectorSettings,
  purpose: 'check' | 'sync' | 'replication' = 'check',
): pg.Client {
  const { Client } = pgDriver().pg;
  const sslMode = String(settings.config.ssl_mode ?? 'disable');
  const named = settings.secrets.host;
  const pinned = settings.connectHost ?? named;
  const password = settings.secrets.password;
  if (!pinned || !settings.secrets.user)
    throw Object.assign(new Error('the source has no host or user'), { code: 'ENOTFOUND' });
  const client = withoutAmbientSettings(
    () =>
      new Client({
        host: pinned,
        port: Number(settings.config.port ?? 5432),
        database: String(settings.config.database),
        user: settings.secrets.user,
        password: () => {
          if (password === undefined || password === '')
            throw Object.assign(new Error('the server asked for a password and the source has none'), {
              code: '28P01',
            });
          return password;
        },
        // Connected by address, a verified TLS session still checks the certificate against the name given.
        ssl:
          sslMode === 'disable'
            ? false
            : sslMode === 'verify-full'
              ? pinned !== named && named
                ? { servername: named }
                : true
              : { rejectUnauthorized: false },
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        ...(purpose === 'check' ? { statement_timeout: QUERY_TIMEOUT_MS, query_timeout: QUERY_TIMEOUT_MS } : {}),
        // A replication connection (CDC) creates its slot and exports the snapshot the first copy reads.
        ...(purpose === 'replication' ? { replication: 'database' } : {}),
        application_name: 'lake',
      }),
  );
  // A connection test, a discovery or a slot's removal reads a few catalog rows: bounded in all too.
  limitPostgresMessages(client, messageBound(settings, { catalogOnly: purpose === 'check' }));
  return client;
}

/**
 * Bounds every message the server sends (wire-limits.ts), inside node-postgres's own reader of its socket (the TLS
 * socket, once swapped in): that reader is the socket's one 'data' listener, which pg-copy-streams takes off while a
 * COPY reads the socket itself (streamed, never a message whole, bounded by the sync's record cap) and puts back
 * after, at a message boundary.
 */
function limitPostgresMessages(client: pg.Client, bound: MessageBound): void {
  const connection = connectionOf(client);
  const attach = connection.attachListeners.bind(connection);
  connection.attachListeners = (stream) => {
    attach(stream);
    const [read] = stream.listeners('data') as ((chunk: Buffer) => void)[];
    if (!read) return;
    stream.removeListener('data', read);
    stream.on('data', limitedReader(stream, 'postgres', bound, read));
  };
}

/** node-postgres's connection under a client: its socket, and how it starts reading one. */
interface PgConnectionInternals {
  stream: Duplex;
  attachListeners(stream: Duplex): void;
}

function connectionOf(client: pg.Client): PgConnectionInternals {
  return (client as unknown as { connection: PgConnectionInternals }).connection;
}

/**
 * Runs `make` (synchronous: nothing else runs meanwhile) with the PG* variables of this process out of the
 * environment, so the driver's constructor cannot take any of them as a default.
 */
function withoutAmbientSettings<T>(make: () => T): T {
  const saved = Object.entries(process.env).filter(([name]) => name.startsWith('PG'));
  for (const [name] of saved) delete process.env[name];
  try {
    return make();
  } finally {
    for (const [name, value] of saved) process.env[name] = value;
  }
}

/**
 * Connects a tenant's client and refuses lake's own metadata database, as the server reports its identity (any
 * address, alias or port forward that reaches it is refused alike). Callers end the client on failure.
 */
export async function connectPostgres(client: pg.Client, settings: ConnectorSettings): Promise<void> {
  await client.connect();
  const guard = settings.ownDatabase;
  if (!guard) return;
  // pg_control_system() is open to every role; a server where it is not (or a fake one) is not lake's own.
  const identity = await client
    .query<{ system: string; database: string }>(
      'SELECT system_identifier::text AS system, current_database() AS database FROM pg_control_system()',
    )
    .then(
      (r) => r.rows[0],
      () => undefined,
    );
  if (identity && (await guard.isOwnIdentity(identity))) throw ownDatabaseRefusal();
}

export const ownDatabaseRefusal = (): LakeServiceError =>
  new LakeServiceError(
    'host_not_allowed',
    "This server does not connect to that database: it is lake's own metadata database. Ask its operator.",
    { param: 'host' },
  );

/**
 * Reduces a driver failure to the fixed vocabulary. Driver messages name hosts, users and databases, so they are
 * never passed on, not even to the log.
 */
export function classifyPostgresFailure(error: unknown): TestFailure {
  const e = error as { code?: string; message?: string };
  switch (e.code) {
    case '28P01':
    case '28000':
      return /SSL|encryption/i.test(e.message ?? '') ? 'tls_required' : 'authentication_failed';
    case '3D000':
      return 'database_not_found';
    case '42501':
      return 'permission_denied';
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EAI_AGAIN':
    case 'ECONNRESET':
      return 'unreachable';
    case 'ETIMEDOUT':
    case '57014':
      return 'timeout';
    default:
      if (/timeout/i.test(e.message ?? '')) return 'timeout';
      if (/does not support SSL|SSL off|no encryption/i.test(e.message ?? '')) return 'tls_required';
      return 'unknown';
  }
}

const DISCOVER_TABLES = `
  SELECT n.nspname AS schema, c.relname AS table, c.oid::int8 AS oid, greatest(c.reltuples, 0)::bigint AS estimated_rows,
         c.reltuples >= 0 AS analyzed,
         (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS column_count
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND n.nspname = ANY($1)
  ORDER BY 1, 2 LIMIT $2`;

const DISCOVER_COLUMNS = `
  SELECT a.attrelid::int8 AS oid, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable
  FROM pg_attribute a
  WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
  ORDER BY a.attrelid, a.attnum`;

const DISCOVER_KEYS = `
  SELECT i.indrelid::int8 AS oid, a.attname AS column
  FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
  WHERE i.indisprimary AND i.indrelid = ANY($1::oid[])
  ORDER BY i.indrelid, array_position(i.indkey::int2[], a.attnum)`;

/** How many of the tables (schemas and names, in two arrays) are missing or lack SELECT for the session's user. */
const TABLES_NOT_READABLE = `
  SELECT count(*) FILTER (WHERE c IS NULL OR NOT has_table_privilege(c, 'SELECT')) AS denied
  FROM (SELECT to_regclass(format('%I.%I', s, t)) AS c FROM unnest($1::text[], $2::text[]) AS x(s, t)) tables`;

/** What discovery keeps of a source when its settings do not say (LAKE_SOURCE_MAX_TABLES, LAKE_SOURCE_MAX_COLUMNS). */
export const DISCOVERY_DEFAULTS = { maxTables: 2_000, maxColumns: 20_000 };

/**
 * Tables, columns, types and primary keys from pg_catalog, which shows them even without SELECT on the table. A
 * partition is not listed: its partitioned table holds its rows (listed too, its rows were synced twice). A
 * source is bounded as a caller is: at most `maxTables` tables (in schema and name order), and columns for as many
 * of them as fit `maxColumns` in all; a table past that keeps its column count and no column list (a sync reads
 * its columns live). What a server sends is cut to the same bounds, whatever its queries answered.
 */
async function discoverWith(client: pg.Client, settings: ConnectorSettings): Promise<DiscoveredTable[]> {
  const { maxTables, maxColumns } = settings.discovery ?? DISCOVERY_DEFAULTS;
  type TableRow = {
    schema: string;
    table: string;
    oid: number | string;
    estimated_rows: string;
    analyzed: boolean;
    column_count: string;
  };
  const found = (await client.query<TableRow>(DISCOVER_TABLES, [schemasOf(settings), maxTables])).rows.slice(
    0,
    maxTables,
  );
  let budget = maxColumns;
  const described = found.filter((t) => {
    const count = Number(t.column_count);
    if (count > budget) return false;
    budget -= count;
    return true;
  });
  const oids = described.map((t) => String(t.oid));
  const columns =
    oids.length === 0
      ? []
      : (
          await client.query<{ oid: number | string; column: string; type: string; nullable: boolean }>(
            DISCOVER_COLUMNS,
            [oids],
          )
        ).rows;
  const keys =
    oids.length === 0 ? [] : (await client.query<{ oid: number | string; column: string }>(DISCOVER_KEYS, [oids])).rows;
  const tables = new Map<string, DiscoveredTable>();
  for (const t of found) {
    tables.set(String(t.oid), {
      schema: t.schema,
      name: t.table,
      columns: [],
      columnCount: Number(t.column_count),
      primaryKey: [],
      estimatedRows: t.analyzed ? Number(t.estimated_rows) : null,
    });
  }
  let kept = 0;
  const listed = new Set(oids);
  for (const row of columns) {
    const table = tables.get(String(row.oid));
    if (!table || !listed.has(String(row.oid)) || kept >= maxColumns) continue;
    table.columns.push({ name: row.column, type: row.type, nullable: row.nullable });
    kept++;
  }
  for (const row of keys) tables.get(String(row.oid))?.primaryKey.push(row.column);
  return [...tables.values()];
}

function schemasOf(settings: ConnectorSettings): string[] {
  return (settings.config.schemas as string[] | undefined) ?? ['public'];
}

async function withClient<T>(settings: ConnectorSettings, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = postgresClient(settings);
  // A failed connection emits 'error' too; without a listener that would crash the process.
  client.on('error', () => {});
  try {
    await connectPostgres(client, settings);
    return await work(client);
  } finally {
    // The work's own result or failure is what the caller gets; a failed goodbye changes neither.
    await client.end().catch(() => {});
  }
}

/**
 * Connects live, runs a trivial query, discovers the tables, and checks SELECT on every table the source syncs.
 * The answer is ok, or one generic reason.
 */
async function testPostgres(settings: ConnectorSettings): Promise<ConnectionTest> {
  try {
    return await withClient(settings, async (client) => {
      await client.query('SELECT 1');
      const tables = await discoverWith(client, settings);
      const wanted = settings.tables.filter((t) => t.enabled);
      const check = wanted.length > 0 ? wanted : tables;
      // Every table in one statement: a statement per table was one round trip each, so a source of 2,000 tables
      // across a 20 ms link took 40 s to test. A table gone since discovery counts as one it may not read.
      const denied = await client
        .query<{ denied: string }>(TABLES_NOT_READABLE, [check.map((t) => t.schema), check.map((t) => t.name)])
        .then(
          (result) => Number(result.rows[0]?.denied),
          (error: unknown) => {
            // A schema it may not use fails the lookup itself; anything else keeps its own reason.
            if ((error as { code?: string }).code === '42501') return 1;
            throw error;
          },
        );
      if (denied > 0) return { ok: false, reason: 'permission_denied' as const, tables };
      return { ok: true, reason: null, tables };
    });
  } catch (error) {
    if (error instanceof LakeServiceError) throw error;
    return { ok: false, reason: classifyPostgresFailure(error) };
  }
}

export const postgresConnector: Connector = {
  name: 'postgres',
  title: 'PostgreSQL',
  auth: 'key',
  syncs: true,
  staffOnly: false,
  fields: [
    ...connectionFields({
      user: 'role to connect as (read access is enough)',
      password: "the role's password",
      port: 5432,
      database: 'database name',
    }),
    {
      name: 'schemas',
      type: 'string_list',
      required: false,
      secret: false,
      description: 'schemas to discover and sync',
      default: ['public'],
    },
    SYNC_CONNECTIONS_FIELD,
    DELETES_FIELD,
    {
      name: 'slot_wal_warning_mb',
      type: 'integer',
      required: false,
      secret: false,
      description:
        "cdc: warn (in the source's logs and on the source) when its replication slot keeps more WAL than this, in MB",
      default: 1024,
      min: 1,
      max: 10_000_000,
    },
    SSL_MODE_FIELD,
  ],
  test: testPostgres,
  discover: (settings) => withClient(settings, (client) => discoverWith(client, settings)),
};
