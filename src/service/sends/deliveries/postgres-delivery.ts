import type pg from 'pg';
import { classifyPostgresFailure, connectPostgres, postgresClient } from '../../connectors/postgres.js';
import { boundedReason } from '../../core/bounded-text.js';
import { LakeServiceError } from '../../core/errors.js';
import { TenantConnections } from '../../connectors/tenant-connections.js';
import type { OutboundPolicy } from '../../net/outbound.js';
import type { ResultColumn } from '../../queries/store.js';
import type { PostgresDestination } from './destination.js';
import { SendFailure, type Delivery, type DeliveryRow } from './types.js';

/** A destination database that sends nothing for this long has its connection ended, and the run fails. */
const DESTINATION_IDLE_MS = 300_000;

/** The longest one delivery may hold its connection. */
const DESTINATION_MAX_MS = 6 * 3_600_000;

/** PostgreSQL's bind-parameter ceiling is 65535; batches stay well under it. */
const MAX_PARAMETERS = 30_000;

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** A PostgreSQL column type for a DuckDB result type; composite values travel as jsonb. */
export function postgresTypeOf(duckType: string): string {
  const t = duckType.toUpperCase();
  if (/\[\]$|\[\d+\]$|^STRUCT|^MAP|^UNION|^JSON$/.test(t)) return 'jsonb';
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(t);
  if (decimal) return `numeric(${decimal[1]},${decimal[2]})`;
  const simple: Record<string, string> = {
    BOOLEAN: 'boolean',
    TINYINT: 'smallint',
    SMALLINT: 'smallint',
    UTINYINT: 'smallint',
    INTEGER: 'integer',
    USMALLINT: 'integer',
    BIGINT: 'bigint',
    UINTEGER: 'bigint',
    UBIGINT: 'numeric',
    HUGEINT: 'numeric',
    BIGNUM: 'numeric',
    UHUGEINT: 'numeric',
    FLOAT: 'real',
    DOUBLE: 'double precision',
    DATE: 'date',
    TIME: 'time',
    TIMESTAMP: 'timestamp',
    TIMESTAMP_S: 'timestamp',
    TIMESTAMP_MS: 'timestamp',
    TIMESTAMP_NS: 'timestamp',
    'TIMESTAMP WITH TIME ZONE': 'timestamptz',
    INTERVAL: 'interval',
    UUID: 'uuid',
  };
  return simple[t] ?? 'text';
}

/** Why a destination failed, in words that name no host, user or database. */
function describeFailure(error: unknown): string {
  const e = error as { code?: string; message?: string };
  const kind = classifyPostgresFailure(error);
  if (kind !== 'unknown') return `the destination database refused the delivery (${kind.replace(/_/g, ' ')})`;
  // SQLSTATE messages from statements on the destination table (a type mismatch, a missing column) name only our
  // own columns and values; connection-level messages were classified above.
  // The message is the destination's to write (a trigger's RAISE can make it megabytes); it travels in the run.
  return e.code
    ? `the destination database refused the delivery: ${boundedReason(e.message ?? e.code)} (SQLSTATE ${e.code})`
    : 'the destination database could not be reached';
}

/**
 * Delivers into a PostgreSQL table in one transaction: the table is created when missing (with the key as its
 * primary key), then rows are upserted on the key, or, in replace mode, the old rows are deleted first. Readers of
 * the table see the old rows until the commit, then all the new ones.
 */
export class PostgresDelivery implements Delivery {
  private client: pg.Client | undefined;
  private columns: readonly ResultColumn[] = [];
  private jsonColumns = new Set<string>();

  constructor(
    private readonly destination: PostgresDestination,
    private readonly secrets: Record<string, string>,
    /** Where databases may be written to; unrestricted when absent. */
    private readonly outbound?: OutboundPolicy,
    /** The run's cancel: it ends the connection at once, whatever the destination is doing. */
    private readonly signal: AbortSignal = new AbortController().signal,
  ) {}

  /** The run's connection, ended for sure on a cancel, an idle destination or the time bound. */
  private connections: TenantConnections | undefined;

  private get target(): string {
    return `${quote(this.destination.schema)}.${quote(this.destination.table)}`;
  }

  async open(columns: readonly ResultColumn[]): Promise<void> {
    const names = new Set(columns.map((c) => c.name));
    const absent = this.destination.key.filter((k) => !names.has(k));
    if (absent.length > 0)
      throw new SendFailure(`The result has no column ${absent.join(', ')} named in destination.key.`);
    this.columns = columns;
    this.jsonColumns = new Set(columns.filter((c) => postgresTypeOf(c.type) === 'jsonb').map((c) => c.name));
    const host = this.secrets.host;
    const connectHost =
      this.outbound && host !== undefined
        ? await this.outbound
            .resolveDatabase(host, this.destination.port, this.destination.database)
            .catch((error: { code?: string }) => {
              throw new SendFailure(
                error.code === 'host_not_allowed'
                  ? "The destination host is refused by this server's outbound rules."
                  : 'The destination database could not be reached.',
                error.code === 'host_not_allowed' ? 'host_not_allowed' : 'delivery_failed',
              );
            })
        : undefined;
    const settings = {
      config: { port: this.destination.port, database: this.destination.database, ssl_mode: this.destination.ssl_mode },
      secrets: this.secrets,
      tables: [],
      ...(connectHost ? { connectHost } : {}),
      ...(this.outbound?.ownDatabase ? { ownDatabase: this.outbound.ownDatabase } : {}),
    };
    let client: pg.Client;
    try {
      client = postgresClient(settings, 'sync');
    } catch (error) {
      throw new SendFailure(describeFailure(error));
    }
    client.on('error', () => {}); // a dropped connection fails the statement in flight; this keeps it from crashing the process
    // A destination that stops answering (or never ends a statement) cannot hold the run: see TenantConnections.
    this.connections = new TenantConnections(
      { idleTimeoutMs: DESTINATION_IDLE_MS, maxDurationMs: DESTINATION_MAX_MS },
      this.signal,
      { work: 'send run', peer: 'destination database' },
    );
    this.connections.add(client);
    try {
      await connectPostgres(client, settings).catch(async (error: unknown) => {
        // Never connected (or connected to what it may not write): there is nothing to roll back.
        await this.connections?.close();
        throw error;
      });
      this.client = client;
      await client.query('BEGIN');
      await client.query(this.createStatement());
      if (this.destination.mode === 'replace') await client.query(`DELETE FROM ${this.target}`);
    } catch (error) {
      await this.abort();
      if (error instanceof LakeServiceError)
        throw new SendFailure(
          "The destination is refused by this server's outbound rules: it is lake's own database.",
          'host_not_allowed',
        );
      throw new SendFailure(describeFailure(error));
    }
  }

  private createStatement(): string {
    const definitions = this.columns.map((c) => `${quote(c.name)} ${postgresTypeOf(c.type)}`);
    if (this.destination.key.length > 0)
      definitions.push(`PRIMARY KEY (${this.destination.key.map(quote).join(', ')})`);
    return `CREATE TABLE IF NOT EXISTS ${this.target} (${definitions.join(', ')})`;
  }

  async deliver(rows: readonly DeliveryRow[]): Promise<void> {
    const client = this.client;
    if (!client) throw new SendFailure('The delivery is not open.');
    const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / Math.max(1, this.columns.length)));
    try {
      for (let start = 0; start < rows.length; start += perStatement)
        await client.query(this.insertStatement(rows.slice(start, start + perStatement)));
    } catch (error) {
      await this.abort();
      throw new SendFailure(this.stoppedReason() ?? describeFailure(error));
    }
  }

  private insertStatement(rows: readonly DeliveryRow[]): { text: string; values: unknown[] } {
    const names = this.columns.map((c) => c.name);
    const values: unknown[] = [];
    const tuples = rows.map((row) => {
      const placeholders = names.map((name) => {
        const value = row[name] ?? null;
        values.push(
          value !== null && (this.jsonColumns.has(name) || typeof value === 'object') ? JSON.stringify(value) : value,
        );
        return `$${values.length}`;
      });
      return `(${placeholders.join(', ')})`;
    });
    let text = `INSERT INTO ${this.target} (${names.map(quote).join(', ')}) VALUES ${tuples.join(', ')}`;
    if (this.destination.mode === 'upsert') {
      const updates = names
        .filter((n) => !this.destination.key.includes(n))
        .map((n) => `${quote(n)} = EXCLUDED.${quote(n)}`);
      const onConflict = `ON CONFLICT (${this.destination.key.map(quote).join(', ')})`;
      text += updates.length > 0 ? ` ${onConflict} DO UPDATE SET ${updates.join(', ')}` : ` ${onConflict} DO NOTHING`;
    }
    return { text, values };
  }

  async commit(): Promise<void> {
    const client = this.client;
    if (!client) throw new SendFailure('The delivery is not open.');
    try {
      await client.query('COMMIT');
    } catch (error) {
      await this.abort();
      throw new SendFailure(this.stoppedReason() ?? describeFailure(error));
    }
    this.client = undefined;
    await this.connections?.close();
  }

  async abort(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    // Rolled back only on a connection still working; an ended one rolls back by itself at the server.
    // (A failed ROLLBACK leaves nothing behind either: the transaction ends with the connection.)
    if (!this.connections?.ended) await client.query('ROLLBACK').catch(() => {});
    await this.connections?.close();
  }

  /** Why the connection was ended (idle destination, time bound), when it was. */
  private stoppedReason(): string | undefined {
    const reason = this.connections?.failure?.message;
    return reason === undefined ? undefined : `The delivery was stopped: ${reason}.`;
  }
}
