import { mkdirSync } from 'node:fs';
import type * as DuckDB from '@duckdb/node-api';
import { requireCommonJs } from '../../load-commonjs.js';

let loaded: typeof DuckDB | undefined;

/** DuckDB's module, loaded on first use only: it costs ~70 ms, which commands that do not query never pay. */
export function loadDuckDB(): Promise<typeof DuckDB> {
  loaded ??= requireCommonJs('@duckdb/node-api') as typeof DuckDB;
  return Promise.resolve(loaded);
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

/** A connection on a private, unsandboxed instance, for lake's own work (writing snapshots, building catalogs). */
export async function openPrivilegedConnection(options: { threads?: number; memoryLimit?: string; tempDirectory?: string } = {}): Promise<{
  connection: DuckDB.DuckDBConnection;
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
  return {
    connection,
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}
