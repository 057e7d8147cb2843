import type { OwnDatabaseGuard } from '../net/own-database.js';
export type FieldType = 'string' | 'integer' | 'boolean' | 'string_list' | 'choice';

export interface FieldSpec {
  name: string;
  type: FieldType;
  required: boolean;
  /** Credentials (hosts, users, passwords, keys) are sent as top-level fields, kept encrypted, never returned. */
  secret: boolean;
  /**
   * Decides where the credentials are sent (host, port, database, user, TLS mode). Changing one drops the stored
   * passwords and keys unless the same request gives them again: a stored password never follows a source to a
   * destination its owner did not give it for.
   */
  destination?: boolean;
  description: string;
  default?: string | number | boolean | string[];
  min?: number;
  max?: number;
  choices?: readonly string[];
}

/** A table a source offers, as discovery found it, with how lake syncs it. */
export interface SourceTable {
  schema: string;
  name: string;
  columns: { name: string; type: string; nullable: boolean }[];
  primaryKey: string[];
  /** From the source's statistics; exact counts come with a sync. */
  estimatedRows: number | null;
  enabled: boolean;
  mode: 'full' | 'incremental' | 'cdc';
  cursorColumn: string | null;
  /**
   * An incremental table whose rows deleted in the source are removed from the lake too: each sync also reads the
   * source's primary keys and deletes the lake's rows whose key is gone (absent: false).
   */
  detectDeletes?: boolean;
  /** The lake table it lands in, unique in the source's lake schema (lakeTableNames); absent for older sources. */
  lakeTable?: string;
  /** Columns the table has; `columns` lists fewer when discovery's column budget ran out (absent: all listed). */
  columnCount?: number;
}

/** The deliberately generic reasons a connection test gives: never a host, a user or a driver message. */
export type TestFailure =
  | 'unreachable'
  | 'timeout'
  | 'authentication_failed'
  | 'database_not_found'
  | 'permission_denied'
  | 'tls_required'
  | 'unknown';

export interface ConnectionTest {
  ok: boolean;
  reason: TestFailure | null;
  /** Present when the test discovered the source's tables along the way. */
  tables?: Omit<SourceTable, 'enabled' | 'mode' | 'cursorColumn'>[];
}

export interface ConnectorSettings {
  config: Record<string, unknown>;
  secrets: Record<string, string>;
  tables: SourceTable[];
  /**
   * The address the outbound rules checked for `host` (OutboundPolicy.resolve): connections go there, and TLS still
   * verifies the name given. Absent only where no rules apply.
   */
  connectHost?: string;
  /** Lake's own metadata database, refused once connected (OutboundPolicy.ownDatabase). */
  ownDatabase?: OwnDatabaseGuard;
  /** What discovery keeps of a source: tables, and columns across them (LAKE_SOURCE_MAX_TABLES, _MAX_COLUMNS). */
  discovery?: { maxTables: number; maxColumns: number };
  /**
   * The longest row a sync takes (LAKE_SYNC_MAX_RECORD_BYTES): no protocol message from the server may be longer,
   * with its framing (wire-limits.ts). Absent, the sync settings' default.
   */
  maxRecordBytes?: number;
  /**
   * The rows one PostgreSQL statement may answer with in all (wire-limits.ts); absent, a few of the longest rows. The
   * session that reads a change stream, whose rows are taken as they arrive and not kept, is given no bound.
   */
  maxResultBytes?: number;
}

export interface Connector {
  name: string;
  title: string;
  /** How a source of this kind authenticates: key-configured sources are created through POST /sources. */
  auth: 'key' | 'oauth' | 'none';
  syncs: boolean;
  staffOnly: boolean;
  /** A legacy name kept for old integrations; new sources use the connector it names. */
  aliasOf?: string;
  fields: readonly FieldSpec[];
  /**
   * What its tables may be synced by beyond full and incremental reads: changes through the source's log (`cdc`),
   * and deletes found by comparing keys (`detect_deletes`). Absent: both.
   */
  tableModes?: { cdc: boolean; detectDeletes: boolean };
  /** Live test; connectors without one answer supported: false. */
  test?: (settings: ConnectorSettings) => Promise<ConnectionTest>;
  /** The tables a new source offers. */
  discover?: (settings: ConnectorSettings) => Promise<Omit<SourceTable, 'enabled' | 'mode' | 'cursorColumn'>[]>;
}

/** A reason a source cannot do CDC, worded for the person who can fix it (never a host or a user's name). */
export class CdcRefusal extends Error {}
