import type pg from 'pg';
import { connectPostgres, postgresClient } from './postgres.js';
import type { TenantConnections } from './tenant-connections.js';
import { CdcRefusal, type ConnectorSettings } from './types.js';

/**
 * The replication slot and the publication lake owns on a source for its cdc tables, both named after the source:
 * `lake_<source id>` (documented, so an operator can find and drop them).
 */
export function cdcName(sourceId: string): string {
  return `lake_${sourceId.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`.slice(0, 63);
}

/** The slot as the source reports it; undefined when it does not exist. */
export interface SlotState {
  /** Where the slot has been acknowledged to (changes before it are gone from it). */
  confirmedLsn: string;
  /** WAL the server keeps for the slot, in bytes (from its restart position to the current one). */
  retainedBytes: number;
  /** `lost`: the server removed WAL the slot needed (max_slot_wal_keep_size), so its changes are gone. */
  walStatus: string | null;
}

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** Checks what CDC needs of the source: logical WAL, and a role that may replicate. */
export async function checkCdcReady(client: pg.Client): Promise<void> {
  const level = (await client.query<{ wal_level: string }>('SHOW wal_level')).rows[0]?.wal_level;
  if (level !== 'logical')
    throw new CdcRefusal(
      `cdc needs wal_level = logical on the source (it is ${level ?? 'unknown'}): set it in postgresql.conf and restart the server, or sync the table incrementally`,
    );
  const may = (
    await client.query<{ may: boolean }>(
      'SELECT rolreplication OR rolsuper AS may FROM pg_roles WHERE rolname = current_user',
    )
  ).rows[0]?.may;
  if (!may)
    throw new CdcRefusal(
      "cdc needs a source role that may replicate: a superuser runs ALTER ROLE <the source's user> WITH REPLICATION",
    );
}

/**
 * The publication lists exactly these tables (created, or its list set); refused without the tables' ownership.
 * A partitioned table's changes are published as its own (`publish_via_partition_root`, PostgreSQL 13 and later):
 * without it they came as each partition's and the publication listed the partitions, so a cdc table partitioned
 * at the source read as unpublished and was copied whole at every sync.
 */
export async function ensurePublication(
  client: pg.Client,
  name: string,
  tables: readonly { schema: string; name: string }[],
): Promise<void> {
  const list = tables.map((t) => `${quoteIdent(t.schema)}.${quoteIdent(t.name)}`).join(', ');
  const found = await client.query<{ exists: boolean; version: number }>(
    "SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1) AS exists, current_setting('server_version_num')::int AS version",
    [name],
  );
  const viaRoot = (found.rows[0]?.version ?? 0) >= 130000;
  try {
    if (!found.rows[0]?.exists)
      await client.query(
        `CREATE PUBLICATION ${quoteIdent(name)} FOR TABLE ${list}${viaRoot ? ' WITH (publish_via_partition_root = true)' : ''}`,
      );
    else {
      await client.query(`ALTER PUBLICATION ${quoteIdent(name)} SET TABLE ${list}`);
      // A publication made by an earlier lake published partitions' changes as theirs.
      if (viaRoot) await client.query(`ALTER PUBLICATION ${quoteIdent(name)} SET (publish_via_partition_root = true)`);
    }
  } catch (error) {
    if ((error as { code?: string }).code === '42501')
      throw new CdcRefusal(
        `cdc needs a publication of the tables, which only their owner (or a superuser) may make: have them run CREATE PUBLICATION ${name} FOR TABLE ${list}, or make the source's role the tables' owner`,
      );
    throw error;
  }
}

export async function slotState(client: pg.Client, name: string): Promise<SlotState | undefined> {
  const row = (
    await client.query<{ confirmed: string | null; retained: string | null; wal_status: string | null }>(
      `SELECT confirmed_flush_lsn::text AS confirmed, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint::text AS retained, wal_status
         FROM pg_replication_slots WHERE slot_name = $1`,
      [name],
    )
  ).rows[0];
  if (!row) return undefined;
  return {
    confirmedLsn: row.confirmed ?? '0/0',
    retainedBytes: Number(row.retained ?? 0),
    walStatus: row.wal_status,
  };
}

/**
 * Creates the slot over a replication connection and keeps that connection open: the snapshot it exports (the
 * source as of the slot's first position) is what the first copy reads, and lives only while the connection does.
 * Close the connection once every reader has imported the snapshot.
 */
export async function createSlot(
  settings: ConnectorSettings,
  connections: TenantConnections,
  name: string,
): Promise<{ connection: pg.Client; snapshot: string; consistentPoint: string }> {
  const connection = postgresClient(settings, 'replication');
  connection.on('error', () => {});
  connections.add(connection);
  await connectPostgres(connection, settings);
  try {
    const row = (
      await connection.query<{ consistent_point: string; snapshot_name: string }>(
        `CREATE_REPLICATION_SLOT ${quoteIdent(name)} LOGICAL pgoutput EXPORT_SNAPSHOT`,
      )
    ).rows[0];
    if (!row?.snapshot_name) throw new Error('the source created the slot without a snapshot');
    return { connection, snapshot: row.snapshot_name, consistentPoint: row.consistent_point };
  } catch (error) {
    await connection.end().catch(() => {});
    if ((error as { code?: string }).code === '42501')
      throw new CdcRefusal(
        "cdc needs a source role that may replicate: a superuser runs ALTER ROLE <the source's user> WITH REPLICATION",
      );
    if ((error as { code?: string }).code === '53400')
      throw new CdcRefusal(
        'the source has no replication slot free (max_replication_slots): raise it, or drop a slot no one uses',
      );
    throw error;
  }
}

/** Tells the slot that changes up to `lsn` are in the lake, so the source may recycle their WAL. */
export async function advanceSlot(client: pg.Client, name: string, lsn: string): Promise<void> {
  await client.query('SELECT pg_replication_slot_advance($1, $2::pg_lsn)', [name, lsn]);
}

/** Drops the slot and the publication (a source deleted, or no cdc table left); nothing when they are gone. */
export async function dropCdc(client: pg.Client, name: string): Promise<void> {
  await client.query(
    'SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active',
    [name],
  );
  await client.query(`DROP PUBLICATION IF EXISTS ${quoteIdent(name)}`);
}
