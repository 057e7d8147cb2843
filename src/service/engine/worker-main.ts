// The entry point of a query worker process (dist/query-worker.js), forked by the worker pool of `lake serve`.
// It runs one query at a time in a sandboxed DuckDB instance and reports over the IPC channel; everything it may
// do is in worker-protocol.ts. Its limits (memory, time past an interrupt) are enforced from outside, by the pool.
import { openPrivilegedConnection } from './duckdb.js';
import { inspectStatement } from './inspect.js';
import { sharedInstancePool } from './instance-pool.js';
import { LakeServiceError, isProgrammingError } from '../core/errors.js';
import { QueryRun } from './query-runner.js';
import { SandboxCache } from './sandbox-cache.js';
import type { FromWorker, ToWorker } from './worker-protocol.js';

const send = (message: FromWorker): void => {
  process.send?.(message);
};

let current: { queryId: string; run: QueryRun } | undefined;
const sandboxes = new SandboxCache();
let parser: Promise<Awaited<ReturnType<typeof openPrivilegedConnection>>> | undefined;

async function run(message: Extract<ToWorker, { type: 'run' }>): Promise<void> {
  const { job } = message;
  const pool = sharedInstancePool({ memoryLimit: job.limits.memoryLimit, threads: job.limits.threads });
  const queryRun = new QueryRun(job, pool, sandboxes);
  current = { queryId: job.queryId, run: queryRun };
  const outcome = await queryRun.execute({
    executing: () => send({ type: 'executing', queryId: job.queryId }),
  });
  current = undefined;
  send({ type: 'outcome', queryId: job.queryId, outcome, rssBytes: process.memoryUsage.rss() });
  // Without a sandbox to reuse, the next query's instance is made while this worker waits for it, not while a
  // query runs here (they would compete for the same cores).
  if (!sandboxes.holds()) pool.warm();
}

async function inspect(message: Extract<ToWorker, { type: 'inspect' }>): Promise<void> {
  // Parsing needs no catalog and reads nothing: one plain instance serves every inspection.
  parser ??= openPrivilegedConnection({ threads: 1, memoryLimit: '256MB' });
  try {
    const { connection } = await parser;
    const references = await inspectStatement(connection, message.statement);
    send({ type: 'inspected', requestId: message.requestId, references });
  } catch (error) {
    if (error instanceof LakeServiceError) {
      send({
        type: 'inspected',
        requestId: message.requestId,
        refusal: { code: error.code, message: error.message, ...(error.param ? { param: error.param } : {}) },
      });
    } else if (isProgrammingError(error)) {
      send({ type: 'inspected', requestId: message.requestId, internalError: error.stack ?? String(error) });
    } else {
      send({
        type: 'inspected',
        requestId: message.requestId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}

process.on('message', (message: ToWorker) => {
  if (message.type === 'run') void run(message);
  else if (message.type === 'stop' && current?.queryId === message.queryId) current.run.stop(message.reason);
  else if (message.type === 'inspect') void inspect(message);
});
// The server went away: nothing is left to report to. SIGKILL, not exit(): a normal exit would wait for DuckDB's
// threads to finish the query, and a query may run for minutes.
process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
// The first query's engine instance is made before it arrives (with the limits the pool forked this worker for).
const [memoryLimit, threads] = process.argv.slice(2);
if (memoryLimit && threads) sharedInstancePool({ memoryLimit, threads: Number(threads) }).warm();
send({ type: 'ready', rssBytes: process.memoryUsage.rss() });
