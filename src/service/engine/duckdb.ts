import { mkdirSync } from 'node:fs';
import type * as DuckDB from '@duckdb/node-api';

let loaded: Promise<typeof DuckDB> | undefined;

/**
 * DuckDB's module, loaded on first use only: commands that do not query never pay for it. In the CLI and worker
 * bundles its JavaScript is bundled, and so in the code cache (its ~100 files took ~100 ms to require on the 2-core
 * machine); only the native binding is loaded from node_modules.
 */
export function loadDuckDB(): Promise<typeof DuckDB> {
  loaded ??= import('@duckdb/node-api');
  return loaded;
}

/** Settings every instance gets: never reach the network for extensions (they would wait on it and fail). */
export const OFFLINE_CONFIG: Record<string, string> = {
  autoinstall_known_extensions: 'false',
  autoload_known_extensions: 'false',
};

export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function quoteLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** A type with a collation, as DuckDB spells it in a table's column (`VARCHAR COLLATE NOCASE`). */
const COLLATED = /^(.*?)\s+COLLATE\s+([\w.]+)$/is;

/**
 * SQL casting `value` to a DuckDB type, a collated one too: CAST takes only the type before the collation, which
 * is then applied to the value (and carries on through views, joins and group-bys).
 */
export function castSql(value: string, type: string, { tryCast = false } = {}): string {
  const collated = COLLATED.exec(type.trim());
  const cast = `${tryCast ? 'TRY_CAST' : 'CAST'}(${value} AS ${collated ? collated[1] : type})`;
  return collated ? `${cast} COLLATE ${collated[2]}` : cast;
}

/** A type without its collation (`VARCHAR COLLATE NOCASE` → `VARCHAR`): what a file holds of it. */
export function uncollated(type: string): string {
  return COLLATED.exec(type.trim())?.[1] ?? type;
}

/** A connection on a private, unsandboxed instance, for lake's own work (writing snapshots, building catalogs). */
export async function openPrivilegedConnection(
  options: { threads?: number; memoryLimit?: string; tempDirectory?: string } = {},
): Promise<{
  connection: DuckDB.DuckDBConnection;
  /** Another connection to the same instance (work in parallel on its database); closed with the instance. */
  connect(): Promise<DuckDB.DuckDBConnection>;
  close(): void;
}> {
  const duckdb = await loadDuckDB();
  const config: Record<string, string> = { ...OFFLINE_CONFIG };
  if (options.threads) config.threads = String(options.threads);
  if (options.memoryLimit) config.memory_limit = options.memoryLimit;
  // Where a load over its memory limit spills; DuckDB's default is .tmp/ in the current directory.
  // DuckDB creates only the last folder of the path, and fails the load that needs to spill when its parent is missing.
  if (options.tempDirectory) {
    mkdirSync(options.tempDirectory, { recursive: true, mode: 0o700 });
    config.temp_directory = options.tempDirectory;
  }
  const instance = await duckdb.DuckDBInstance.create(':memory:', config);
  const connection = await instance.connect();
  const others: DuckDB.DuckDBConnection[] = [];
  return {
    connection,
    async connect() {
      const other = await instance.connect();
      others.push(other);
      return other;
    },
    close() {
      for (const other of others) other.closeSync();
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/**
 * DuckDB's message without its advice to change a setting (`Use "SET max_expression_depth TO x" to increase …`):
 * a query cannot run SET, and its sandbox's configuration is locked, so the advice would only send the caller to a
 * refusal. What the message says of the error itself is kept.
 */
export function withoutSettingAdvice(message: string): string {
  return message.replace(
    /\s*Use "(?:SET|PRAGMA|RESET) [^"]*"[^.]*\./g,
    ' (a setting of the server, which a query cannot change)',
  );
}
