import { openPrivilegedConnection } from './duckdb.js';
import { inspectStatement } from './inspect.js';
import { sharedInstancePool, type InstancePool } from './instance-pool.js';
import type { QueryEngine, QueryEvents, QueryJob, RunningQuery } from './query-engine.js';
import { QueryRun } from './query-runner.js';
import { SandboxCache } from './sandbox-cache.js';
import type { Sandbox } from './sandbox.js';
import type { TableReference } from './table-refs.js';

/**
 * Runs queries inside the calling process: the local CLI's engine. DuckDB works on its own threads, so the event
 * loop stays free, and a query's time and result size are enforced by interrupting it. Memory is DuckDB's own
 * memory_limit only, and work DuckDB cannot interrupt runs on: one process cannot do more to itself. `lake serve`
 * uses the worker pool instead.
 */
export class InProcessEngine implements QueryEngine {
  readonly slots: number;
  /** The sandbox inspect opened, kept for the run that follows so a query needs one engine instance, not two. */
  private readonly inspected = new Map<string, Sandbox>();
  private readonly sandboxes = new SandboxCache();

  constructor(
    private readonly limits: { memoryLimit: string; threads: number },
    slots: number,
  ) {
    this.slots = slots;
  }

  private get pool(): InstancePool {
    return sharedInstancePool(this.limits);
  }

  async inspect(job: QueryJob): Promise<TableReference[]> {
    const sandbox = await this.sandboxes.open({
      catalogFile: job.catalogFile,
      readableDirs: job.readableDirs,
      writableDir: job.writableDir,
      pool: this.pool,
    });
    try {
      const references = await inspectStatement(sandbox.connection, job.statement);
      this.inspected.set(job.queryId, sandbox);
      return references;
    } catch (error) {
      sandbox.close();
      throw error;
    }
  }

  /** A plain instance that parses and reads nothing: one serves every statement checked without running. */
  private parser: ReturnType<typeof openPrivilegedConnection> | undefined;

  async parse(statement: string): Promise<TableReference[]> {
    this.parser ??= openPrivilegedConnection({ threads: 1, memoryLimit: '256MB' });
    return inspectStatement((await this.parser).connection, statement);
  }

  start(job: QueryJob, events?: QueryEvents): RunningQuery {
    const sandbox = this.inspected.get(job.queryId);
    this.inspected.delete(job.queryId);
    const run = new QueryRun(job, this.pool, this.sandboxes, sandbox);
    return { outcome: run.execute(events), stop: (reason) => run.stop(reason) };
  }

  forget(queryId: string): void {
    this.inspected.get(queryId)?.close();
    this.inspected.delete(queryId);
  }

  warm(): void {
    this.pool.warm({ keep: true, parser: true });
  }

  async close(): Promise<void> {
    for (const id of [...this.inspected.keys()]) this.forget(id);
    this.sandboxes.close();
    const parser = this.parser;
    this.parser = undefined;
    await parser?.then(({ close }) => close()).catch(() => undefined);
    await this.pool.release();
  }
}
