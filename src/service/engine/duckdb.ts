import { mkdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type * as DuckDB from '@duckdb/node-api';
import { requireCommonJs } from '../../support/load-commonjs.js';

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

let preloading: Promise<void> | undefined;

/**
 * Loads DuckDB's native library (a 70 MB shared object) on a thread of its own, ahead of a write that will need it:
 * the system's loader maps and relocates it once a process, and Node's load of the binding on the main thread blocks
 * it for that long (18–105 ms measured cold on the 2-core machine; 2 ms once another thread has loaded it). A sync
 * calls this when its job starts, so the load runs beside its source's read instead of after it (a cdc sync's
 * write begins only once the binary log is read) and a sync that writes nothing pays no main-thread time for it.
 * Never fails: should the thread not load it, the main thread loads it as before, and reports what is wrong.
 */
export function preloadDuckDBLibrary(): Promise<void> {
  preloading ??= new Promise<void>((resolve) => {
    try {
      const bindings = requireCommonJs.resolve('@duckdb/node-bindings');
      // CommonJS whatever the process's flags (execArgv: a process started with --input-type=module would make the
      // thread's code a module, without require). Its output is not the process's: stdout carries only the command's.
      const worker = new Worker(`require(${JSON.stringify(bindings)})`, {
        eval: true,
        execArgv: [],
        stdout: true,
        stderr: true,
      });
      worker.unref();
      worker.once('error', () => resolve());
      worker.once('exit', () => resolve());
    } catch {
      resolve();
    }
  });
  return preloading;
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

/** The options of a privileged instance. */
export interface PrivilegedOptions {
  threads?: number;
  memoryLimit?: string;
  tempDirectory?: string;
}

/** A connection on a privileged instance, and the instance's other connections, closed with it. */
export interface PrivilegedConnection {
  connection: DuckDB.DuckDBConnection;
  /** Another connection to the same instance (work in parallel on its database); closed with the instance. */
  connect(): Promise<DuckDB.DuckDBConnection>;
  close(): void;
  /**
   * Closes the connections and keeps the instance, warm, for the next openPrivilegedConnection with the same options
   * (see idleInstance); an instance whose database still holds anything, or that one is kept for already, is closed.
   */
  release(): Promise<void>;
}

const optionsKey = (options: PrivilegedOptions): string =>
  `${options.threads ?? ''}|${options.memoryLimit ?? ''}|${options.tempDirectory ?? ''}`;

/** An instance opened ahead of the write that will ask for one with the same options (openAhead). */
let ahead: { key: string; opened: Promise<PrivilegedConnection> } | undefined;

/**
 * Starts opening a privileged instance now, for the next openPrivilegedConnection with the same options: DuckDB
 * builds an instance (its functions, its built-in extensions) on a thread of its own, tens of milliseconds that a
 * write which can only begin later (a cdc sync's, once the log is read) then does not wait for. Answers what closes
 * the instance if no write took it; one instance waits at most.
 */
export function openAhead(options: PrivilegedOptions): () => void {
  if (ahead || idleInstance?.key === optionsKey(options)) return () => undefined;
  const mine = { key: optionsKey(options), opened: openInstance(options) };
  mine.opened.catch(() => undefined);
  ahead = mine;
  return () => {
    if (ahead !== mine) return;
    ahead = undefined;
    void mine.opened.then(
      (opened) => opened.close(),
      () => undefined,
    );
  };
}

/**
 * An instance a finished write let go of (release), kept for the next write with the same options. A fresh instance's
 * first load costs about twice a warm one's CPU, most of it page faults on its new memory (10–13 µs each on the
 * 2-core VM; docs/performance.md), and a sync writes one table after another: 20 tables of 50,000 rows synced in
 * 2.1 s instead of 3.7. Only a database left empty is kept (release checks), each use gets connections of its own
 * (temporary objects and a connection's settings do not outlive it), and it is closed once idle for IDLE_INSTANCE_MS.
 */
let idleInstance: { key: string; instance: DuckDB.DuckDBInstance; timer: NodeJS.Timeout } | undefined;

/** How long a released instance is kept for the next write: the gap between a sync's tables, not between syncs. */
const IDLE_INSTANCE_MS = 5_000;

/** Closes the instance kept for the next write, if any (a process that ends closes it before it exits). */
export function closeIdleInstance(): void {
  const idle = idleInstance;
  idleInstance = undefined;
  if (!idle) return;
  clearTimeout(idle.timer);
  idle.instance.closeSync();
}

/** A connection on a private, unsandboxed instance, for lake's own work (writing snapshots, building catalogs). */
export async function openPrivilegedConnection(options: PrivilegedOptions = {}): Promise<PrivilegedConnection> {
  if (idleInstance?.key === optionsKey(options)) {
    const { instance, timer } = idleInstance;
    idleInstance = undefined;
    clearTimeout(timer);
    return connectTo(instance, options);
  }
  if (ahead?.key === optionsKey(options)) {
    const taken = ahead.opened;
    ahead = undefined;
    return taken;
  }
  return openInstance(options);
}

async function openInstance(options: PrivilegedOptions): Promise<PrivilegedConnection> {
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
  return connectTo(await duckdb.DuckDBInstance.create(':memory:', config), options);
}

/** Nothing but DuckDB's own objects in an instance's database, and no other database attached. */
const LEFT_BEHIND_SQL = `SELECT (SELECT count(*) FROM duckdb_tables() WHERE NOT internal)
  + (SELECT count(*) FROM duckdb_views() WHERE NOT internal)
  + (SELECT count(*) FROM duckdb_databases() WHERE NOT internal AND database_name <> 'memory') AS left_behind`;

async function connectTo(instance: DuckDB.DuckDBInstance, options: PrivilegedOptions): Promise<PrivilegedConnection> {
  const connection = await instance.connect();
  const others: DuckDB.DuckDBConnection[] = [];
  const closeConnections = (): void => {
    for (const other of others.splice(0)) other.closeSync();
    connection.closeSync();
  };
  return {
    connection,
    async connect() {
      const other = await instance.connect();
      others.push(other);
      return other;
    },
    close() {
      closeConnections();
      instance.closeSync();
    },
    async release() {
      // What a write left in the database (a merge's working table after a failure) must not reach the next one,
      // which may be another organization's: such an instance is closed, not kept.
      const empty = await connection
        .runAndReadAll(LEFT_BEHIND_SQL)
        .then((result) => Number(result.getRows()[0]?.[0]) === 0)
        .catch(() => false);
      closeConnections();
      if (!empty || idleInstance) {
        instance.closeSync();
        return;
      }
      const timer = setTimeout(closeIdleInstance, IDLE_INSTANCE_MS);
      timer.unref();
      idleInstance = { key: optionsKey(options), instance, timer };
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
