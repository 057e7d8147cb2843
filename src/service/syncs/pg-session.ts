import type pg from 'pg';
import { connectPostgres, postgresClient } from '../connectors/postgres.js';
import type { TenantConnections } from '../connectors/tenant-connections.js';
import type { ConnectorSettings } from '../connectors/types.js';

/**
 * A sync's connection to the source, with the settings every value's text is read in, in a REPEATABLE READ, READ
 * ONLY transaction: in `snapshot` when given (a CDC slot's, exported when it was created), else its own. With
 * `transaction: false` it opens none (CDC's own connection, which reads the slot and writes temporary tables).
 */
export async function openSession(
  settings: ConnectorSettings,
  connections: TenantConnections,
  options: { snapshot?: string; transaction?: boolean } = {},
): Promise<pg.Client> {
  const client = postgresClient(settings, 'sync');
  client.on('error', () => {});
  connections.add(client);
  await connectPostgres(client, settings);
  await client.query(
    "SET TimeZone = 'UTC'; SET DateStyle = 'ISO'; SET IntervalStyle = 'iso_8601'; SET extra_float_digits = 1",
  );
  // PostgreSQL 14 and later notice a client that has gone while a statement runs (a lock wait, a long scan)
  // instead of only at its next write; older servers do not know the setting, which changes nothing else.
  await client.query("SET client_connection_check_interval = '2s'").catch(() => undefined);
  if (options.transaction === false) return client;
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
  if (options.snapshot !== undefined)
    await client.query(`SET TRANSACTION SNAPSHOT '${options.snapshot.replace(/'/g, "''")}'`);
  return client;
}

/** The leader's snapshot, for other connections to import; undefined where the server will not export one. */
async function exportSnapshot(client: pg.Client): Promise<string | undefined> {
  try {
    // Not in a savepoint: PostgreSQL exports no snapshot from a subtransaction.
    return (await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id')).rows[0]?.id;
  } catch {
    // Nothing was read yet: the aborted transaction is replaced by a fresh one.
    await client.query('ROLLBACK');
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    return undefined;
  }
}

/**
 * Up to `count` helper connections in the leader's snapshot, so every table comes from one point in time. Where the
 * snapshot cannot be exported, or a helper cannot join it (the server's connection limit, say), the sync reads over
 * fewer connections; never over one that would see another point in time.
 */
export async function joinSnapshot(
  leader: pg.Client,
  count: number,
  settings: ConnectorSettings,
  connections: TenantConnections,
): Promise<pg.Client[]> {
  const snapshot = count > 0 ? await exportSnapshot(leader) : undefined;
  const helpers: pg.Client[] = [];
  for (let i = 0; snapshot !== undefined && i < count; i++) {
    // A helper connection that cannot open (the server's connection limit) only means fewer connections.
    const helper = await openSession(settings, connections).catch(() => undefined);
    if (!helper) break;
    try {
      await helper.query(`SET TRANSACTION SNAPSHOT '${snapshot.replace(/'/g, "''")}'`);
      helpers.push(helper);
    } catch {
      // Already failing to join the snapshot: its end is best effort (the sync's close destroys it anyway).
      await helper.end().catch(() => {});
      break;
    }
  }
  return helpers;
}
