import { availableParallelism } from 'node:os';
import { positiveInteger } from '../core/env-values.js';

export interface QuerySettings {
  /** A query running longer (preparation included, time in the queue not) is interrupted and fails. */
  timeoutMs: number;
  memoryLimit: string;
  threads: number;
  /** Queries queued or running at once per organization; more get 429 too_many_queries. */
  maxInFlight: number;
  /** Query records and result files are removed this long after submission. */
  retentionSeconds: number;
  /** Bytes one result file may reach; a query writing more fails `result_too_large`. */
  maxResultBytes: number;
  /** Result bytes an organization may keep (until retention removes them); over it, new queries are refused. */
  orgResultStorageBytes: number;
}

/** Defaults documented in docs/api.md ("Limits"); each can be changed through the environment of lake serve or the CLI. */
export function querySettingsFromEnv(env: Record<string, string | undefined>): QuerySettings {
  const memoryLimit = env.LAKE_QUERY_MEMORY_LIMIT || '2GB';
  if (!/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.test(memoryLimit)) {
    throw new Error(`LAKE_QUERY_MEMORY_LIMIT must look like 512MB or 2GB, not '${memoryLimit}'.`);
  }
  return {
    timeoutMs: positiveInteger(env, 'LAKE_QUERY_TIMEOUT_SECONDS', 300) * 1000,
    memoryLimit,
    threads: positiveInteger(env, 'LAKE_QUERY_THREADS', availableParallelism()),
    maxInFlight: positiveInteger(env, 'LAKE_MAX_INFLIGHT_QUERIES', 8),
    retentionSeconds: positiveInteger(env, 'LAKE_QUERY_RETENTION_HOURS', 48) * 3600,
    maxResultBytes: positiveInteger(env, 'LAKE_QUERY_MAX_RESULT_MB', 1024) * 2 ** 20,
    orgResultStorageBytes: positiveInteger(env, 'LAKE_ORG_RESULT_STORAGE_MB', 10_240) * 2 ** 20,
  };
}
