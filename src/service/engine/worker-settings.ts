import { availableParallelism, totalmem } from 'node:os';
import { positiveInteger } from '../core/env-values.js';

/** How `lake serve` runs queries: a pool of worker processes with limits the operating system enforces. */
export interface WorkerPoolSettings {
  /** Worker processes, each running one query at a time. */
  workers: number;
  /** Workers one organization may hold at once, so others always find one free. */
  workersPerOrganization: number;
  /** After an interrupt (time limit, cancel, result size), how long a worker has to stop before it is killed. */
  killGraceMs: number;
  /** A worker is replaced after this many queries… */
  recycleAfterQueries: number;
  /** …or once its resident memory has grown this much over what it used when it started. */
  recycleGrowthBytes: number;
  /** Put each worker in a memory cgroup of its own where the system allows it (the limit the kernel enforces). */
  memoryCgroups: boolean;
}

const UNITS: Record<string, number> = {
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** DuckDB's size notation (512MB, 2GB, 1.5GiB) in bytes, with DuckDB's meaning of each unit. */
export function parseByteSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.exec(text.trim());
  if (!match) throw new Error(`'${text}' is not a size like 512MB or 2GB.`);
  return Math.round(Number(match[1]) * (UNITS[(match[2] as string).toLowerCase()] as number));
}

/** Memory a worker process needs besides its query: Node, DuckDB's code and a spare engine instance. */
export const WORKER_BASE_BYTES = 256 * 2 ** 20;

/**
 * The pool's defaults: two workers per core (a query waiting on I/O leaves its core to another), no more than
 * three quarters of the machine's memory can hold at the per-query limit, and never fewer than two, so one
 * organization can never hold every worker.
 */
export function workerPoolSettingsFromEnv(
  /** The per-query memory limit (LAKE_QUERY_MEMORY_LIMIT), in DuckDB's notation. */
  queryMemoryLimit: string,
  env: Record<string, string | undefined>,
): WorkerPoolSettings {
  const perWorker = parseByteSize(queryMemoryLimit) + WORKER_BASE_BYTES;
  const byMemory = Math.floor((totalmem() * 0.75) / perWorker);
  const workers = positiveInteger(
    env,
    'LAKE_QUERY_WORKERS',
    Math.max(2, Math.min(2 * availableParallelism(), byMemory)),
  );
  return {
    workers,
    workersPerOrganization: Math.min(
      workers,
      positiveInteger(env, 'LAKE_QUERY_WORKERS_PER_ORG', Math.max(1, Math.ceil(workers / 2))),
    ),
    killGraceMs: positiveInteger(env, 'LAKE_QUERY_KILL_GRACE_SECONDS', 5) * 1000,
    recycleAfterQueries: positiveInteger(env, 'LAKE_QUERY_WORKER_MAX_QUERIES', 500),
    recycleGrowthBytes: positiveInteger(env, 'LAKE_QUERY_WORKER_RECYCLE_MB', 512) * 2 ** 20,
    memoryCgroups: env.LAKE_QUERY_MEMORY_CGROUP !== '0',
  };
}
