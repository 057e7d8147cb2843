import { availableParallelism } from 'node:os';

export interface QuerySettings {
  /** A query running longer is interrupted and fails. */
  timeoutMs: number;
  memoryLimit: string;
  threads: number;
  /** Queries running at once per organization; more get 429 too_many_queries. */
  maxInFlight: number;
  /** Query records and result files are removed this long after submission. */
  retentionSeconds: number;
}

function positiveInteger(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number, not '${raw}'.`);
  return value;
}

/** Defaults documented in docs/api.md ("Limits"); each can be changed through the environment of lake serve or the CLI. */
export function querySettingsFromEnv(env: Record<string, string | undefined> = process.env): QuerySettings {
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
  };
}
