import type { DuckDBInstance } from '@duckdb/node-api';
import { loadDuckDB, OFFLINE_CONFIG } from './duckdb.js';

export interface InstanceLimits {
  memoryLimit: string;
  threads: number;
}

/**
 * Keeps one fresh DuckDB instance ready for the next query. Creating an instance takes 10–30 ms on DuckDB's own
 * threads; made ahead, that time overlaps with other work (start-up, the previous query) instead of adding to a
 * query's latency. Each instance still serves exactly one query.
 */
export class InstancePool {
  private spare: Promise<DuckDBInstance> | undefined;
  /** Set once warm() is called: a server that expects more queries keeps a spare after each take(). */
  private keepSpare = false;
  private readyParser = false;

  constructor(private readonly limits: InstanceLimits) {}

  /**
   * Starts making the spare instance, if none is ready or on its way. `parser`: the instance will also inspect
   * statements (in process), so DuckDB's one-time set-up of its SQL serializer (~8 ms, the first
   * json_serialize_sql of a process) is done now, on DuckDB's thread, instead of on the query's critical path.
   */
  warm(options: { keep?: boolean; parser?: boolean } = {}): void {
    if (options.keep) this.keepSpare = true;
    if (options.parser) this.readyParser = true;
    if (this.spare) return;
    const making = this.create(this.readyParser);
    // A failed spare is not an error of anyone's yet; take() will try again and report it then.
    making.catch(() => {
      if (this.spare === making) this.spare = undefined;
    });
    this.spare = making;
  }

  /**
   * A fresh instance: the spare when there is one. A pool told to keep a spare starts the next one; a one-shot
   * command does not, since a second instance would only compete with its query for the cores.
   */
  async take(): Promise<DuckDBInstance> {
    const ready = this.spare ?? this.create();
    this.spare = undefined;
    const instance = await ready;
    if (this.keepSpare) this.warm();
    return instance;
  }

  /** Closes the spare, if any; the pool stays usable and makes a new one on the next take(). */
  async release(): Promise<void> {
    const spare = this.spare;
    this.spare = undefined;
    // A spare that failed to open has nothing to close.
    if (spare) (await spare.catch(() => undefined))?.closeSync();
  }

  private async create(parser = false): Promise<DuckDBInstance> {
    const duckdb = await loadDuckDB();
    const instance = await duckdb.DuckDBInstance.create(':memory:', {
      ...OFFLINE_CONFIG,
      threads: String(this.limits.threads),
      memory_limit: this.limits.memoryLimit,
    });
    if (parser) {
      const connection = await instance.connect();
      await connection.run("SELECT json_serialize_sql('SELECT 1')");
      connection.closeSync();
    }
    return instance;
  }
}

const shared = new Map<string, InstancePool>();

/** One pool per set of limits per process, so a command can start warming before the services exist. */
export function sharedInstancePool(limits: InstanceLimits): InstancePool {
  const key = `${limits.threads}/${limits.memoryLimit}`;
  let pool = shared.get(key);
  if (!pool) {
    pool = new InstancePool(limits);
    shared.set(key, pool);
  }
  return pool;
}
