import { mark } from '../../support/debug-timing.js';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { quoteLiteral } from './duckdb.js';
import type { InstancePool } from './instance-pool.js';

export interface SandboxSpec {
  catalogFile: string;
  /** Directories the query may read: the organization's table snapshots. */
  readableDirs: readonly string[];
  /** The one directory it may write: the organization's results folder (its result goes in a folder of its own there). */
  writableDir: string;
  /** Where the query's fresh instance comes from; its limits are the query's limits. */
  pool: InstancePool;
}

export interface Sandbox {
  connection: DuckDBConnection;
  interrupt(): void;
  close(): void;
}

const withSlash = (dir: string): string => (dir.endsWith('/') ? dir : `${dir}/`);

/**
 * A DuckDB instance of its own for one query, locked down before any user SQL reaches it: the lake catalog
 * attached READ_ONLY as `lake` (and made the default, so `demo.orders` works too), file access limited to the
 * lake's data and the query's own result folder, no temp directory, no external access, no extension loading,
 * and the configuration locked so the query cannot undo any of it. Its own instance also gives each query its
 * own memory limit.
 */
export async function openSandbox(spec: SandboxSpec): Promise<Sandbox> {
  const instance: DuckDBInstance = await spec.pool.take();
  mark('sandbox: instance ready');
  let connection: DuckDBConnection | undefined;
  try {
    connection = await instance.connect();
    const allowed = [...spec.readableDirs, spec.writableDir].map((d) => quoteLiteral(withSlash(d))).join(', ');
    await connection.run(
      [
        `ATTACH ${quoteLiteral(spec.catalogFile)} AS lake (READ_ONLY)`,
        'USE lake',
        `SET allowed_directories = [${allowed}]`,
        // Results must not depend on the server's time zone.
        "SET TimeZone = 'UTC'",
        "SET temp_directory = ''",
        'SET enable_external_access = false',
        'SET lock_configuration = true',
      ].join(';\n'),
    );
  } catch (error) {
    connection?.closeSync();
    instance.closeSync();
    throw error;
  }
  mark('sandbox: catalog attached, locked down');
  const open = connection;
  return {
    connection: open,
    interrupt: () => open.interrupt(),
    close() {
      open.closeSync();
      instance.closeSync();
    },
  };
}
