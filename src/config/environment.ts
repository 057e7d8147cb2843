/**
 * Every LAKE_* environment variable lake reads, with what it does and its default: printed by `lake help
 * environment` and kept equal to README's "Environment variables" table by a test (which also finds any variable
 * the code reads that is missing here).
 */
export interface EnvironmentVariable {
  name: string;
  /** Who reads it: any command, the CLI's output, or `lake serve` (and the local lake's engine). */
  scope: 'CLI' | 'serve' | 'all';
  meaning: string;
  default: string;
}

export const ENVIRONMENT_VARIABLES: readonly EnvironmentVariable[] = [
  { name: 'LAKE_HOME', scope: 'CLI', meaning: 'the local lake home (like --home)', default: '~/.local/share/lake' },
  {
    name: 'LAKE_BASE_URL',
    scope: 'CLI',
    meaning: 'use the lake service at this URL (like --base-url)',
    default: 'none: the local lake',
  },
  {
    name: 'LAKE_TOKEN',
    scope: 'CLI',
    meaning: 'the credential for the service (like --token)',
    default: "the profile's, or the local home's own",
  },
  {
    name: 'LAKE_PROFILE',
    scope: 'CLI',
    meaning: 'the settings profile to use (like --profile)',
    default: 'the current profile, if any',
  },
  {
    name: 'LAKE_CONFIG_DIR',
    scope: 'CLI',
    meaning: 'where profiles are kept (config.json)',
    default: '~/.config/lake',
  },
  {
    name: 'LAKE_OUTPUT',
    scope: 'CLI',
    meaning: 'the output format when --output is not given',
    default: 'table on a terminal, csv in a pipe',
  },
  {
    name: 'LAKE_SCHEMA',
    scope: 'CLI',
    meaning: 'the schema unqualified table names resolve in (lake query, lake sql; like --schema)',
    default: "the profile's schema, else none",
  },
  {
    name: 'LAKE_PAGER',
    scope: 'CLI',
    meaning: 'the pager for output longer than the terminal (cat or empty: none)',
    default: '$PAGER, else less -FRX',
  },
  {
    name: 'LAKE_DEBUG_TIMING',
    scope: 'all',
    meaning: '1 prints when each step of a command ends, on stderr',
    default: 'off',
  },
  {
    name: 'LAKE_CORS_ORIGINS',
    scope: 'serve',
    meaning: 'browser origins allowed to call the API (comma list, exact origins)',
    default: 'none',
  },
  {
    name: 'LAKE_SOURCES_ALLOW',
    scope: 'serve',
    meaning: 'hosts sources may connect to (comma list)',
    default: 'any host but those denied',
  },
  {
    name: 'LAKE_SOURCES_DENY',
    scope: 'serve',
    meaning: 'hosts sources may not connect to (comma list)',
    default:
      "loopback and localhost, 0.0.0.0/8 and ::, link-local, cloud metadata, Unix sockets (lake serve); lake's own metadata database is always refused",
  },
  {
    name: 'LAKE_DESTINATIONS_ALLOW',
    scope: 'serve',
    meaning: 'hosts sends may deliver to (comma list)',
    default: 'any host but those denied',
  },
  {
    name: 'LAKE_DESTINATIONS_DENY',
    scope: 'serve',
    meaning: 'hosts sends may not deliver to (comma list)',
    default:
      "loopback and localhost, 0.0.0.0/8 and ::, link-local, cloud metadata, Unix sockets (lake serve); lake's own metadata database is always refused",
  },
  {
    name: 'LAKE_RATE_LIMIT_PER_CALLER',
    scope: 'serve',
    meaning: 'requests a minute per caller (0: no limit)',
    default: '120',
  },
  {
    name: 'LAKE_RATE_LIMIT_PER_ORG',
    scope: 'serve',
    meaning: 'requests a minute per organization (0: no limit)',
    default: '600',
  },
  {
    name: 'LAKE_TRUSTED_PROXIES',
    scope: 'serve',
    meaning: 'proxies whose X-Forwarded-For names the client for address limits (comma list of addresses, CIDR blocks)',
    default: "none: the socket's address",
  },
  {
    name: 'LAKE_MAX_CONNECTIONS',
    scope: 'serve',
    meaning: 'connections lake serve holds open at once (more → 503 at connect)',
    default: "half the process's open-file limit, at most 10000",
  },
  {
    name: 'LAKE_MAX_CONNECTIONS_PER_CLIENT',
    scope: 'serve',
    meaning:
      'connections one client address (an IPv6 /64) holds open at once (more → 429; trusted proxies exempt; 0: none)',
    default: 'a quarter of LAKE_MAX_CONNECTIONS, at most 256',
  },
  {
    name: 'LAKE_RATE_LIMIT_FAILED_AUTH',
    scope: 'serve',
    meaning: 'failed authentications a minute per address',
    default: '20',
  },
  {
    name: 'LAKE_MAX_INFLIGHT_QUERIES',
    scope: 'all',
    meaning: "an organization's queries queued or running at once",
    default: '8',
  },
  { name: 'LAKE_QUERY_TIMEOUT_SECONDS', scope: 'all', meaning: "a query's time limit", default: '300' },
  { name: 'LAKE_QUERY_MEMORY_LIMIT', scope: 'all', meaning: "a query's memory limit (512MB, 2GB, …)", default: '2GB' },
  { name: 'LAKE_QUERY_THREADS', scope: 'all', meaning: 'threads a query may use', default: 'the number of cores' },
  { name: 'LAKE_QUERY_MAX_RESULT_MB', scope: 'all', meaning: "a query result's size limit", default: '1024' },
  {
    name: 'LAKE_ORG_RESULT_STORAGE_MB',
    scope: 'all',
    meaning: 'the result bytes an organization may keep',
    default: '10240',
  },
  { name: 'LAKE_QUERY_RETENTION_HOURS', scope: 'all', meaning: 'how long query results are kept', default: '48' },
  {
    name: 'LAKE_QUERY_WORKERS',
    scope: 'serve',
    meaning: 'query worker processes',
    default: '2 × cores, fewer if memory is short (at least 2)',
  },
  {
    name: 'LAKE_QUERY_WORKERS_PER_ORG',
    scope: 'serve',
    meaning: "workers one organization's queries may hold",
    default: 'half the workers',
  },
  {
    name: 'LAKE_QUERY_KILL_GRACE_SECONDS',
    scope: 'serve',
    meaning: 'how long an interrupted query has before its worker is killed',
    default: '5',
  },
  {
    name: 'LAKE_QUERY_WORKER_MAX_QUERIES',
    scope: 'serve',
    meaning: 'queries a worker runs before it is replaced',
    default: '500',
  },
  {
    name: 'LAKE_QUERY_WORKER_RECYCLE_MB',
    scope: 'serve',
    meaning: "a worker's memory growth that gets it replaced",
    default: '512',
  },
  {
    name: 'LAKE_QUERY_MEMORY_CGROUP',
    scope: 'serve',
    meaning: '0 turns off the per-worker memory cgroups',
    default: 'on where cgroups v2 allow it',
  },
  { name: 'LAKE_WORKER_DEBUG', scope: 'serve', meaning: "1 lets query workers' stderr through", default: 'off' },
  { name: 'LAKE_SYNC_CONCURRENCY', scope: 'all', meaning: 'syncs one process runs at once', default: '4' },
  {
    name: 'LAKE_SYNC_CONCURRENCY_PER_ORG',
    scope: 'all',
    meaning: 'syncs of one organization one process runs at once',
    default: '2',
  },
  {
    name: 'LAKE_SYNC_IDLE_TIMEOUT_SECONDS',
    scope: 'all',
    meaning: 'a source connection that receives nothing this long while a statement waits on it ends its sync',
    default: '1800',
  },
  {
    name: 'LAKE_SYNC_TIMEOUT_SECONDS',
    scope: 'all',
    meaning: 'the longest a sync may read from its source',
    default: '86400',
  },
  {
    name: 'LAKE_SYNC_MAX_RECORD_BYTES',
    scope: 'all',
    meaning:
      'the largest row a sync takes from a source (its server may send no longer message, with 1 MiB of framing)',
    default: '67108864 (64 MiB)',
  },
  {
    name: 'LAKE_SYNC_MAX_TABLE_STAGING_BYTES',
    scope: 'all',
    meaning: 'bytes one table may have staged on disk at once',
    default: '8589934592 (8 GiB)',
  },
  {
    name: 'LAKE_SYNC_MAX_STAGING_BYTES',
    scope: 'all',
    meaning: 'bytes one sync may have staged on disk at once',
    default: '17179869184 (16 GiB)',
  },
  {
    name: 'LAKE_SOURCE_MAX_TABLES',
    scope: 'all',
    meaning: 'tables discovery keeps of one source (in schema and name order)',
    default: '2000',
  },
  {
    name: 'LAKE_SOURCE_MAX_COLUMNS',
    scope: 'all',
    meaning: "columns discovery lists across one source's tables",
    default: '20000',
  },
  {
    name: 'LAKE_ORG_MAX_SOURCES',
    scope: 'all',
    meaning: 'sources an organization keeps (deleted ones not counted)',
    default: '1000',
  },
  {
    name: 'LAKE_ORG_MAX_SENDS',
    scope: 'all',
    meaning: 'sends an organization keeps',
    default: '1000',
  },
  {
    name: 'LAKE_ORG_MAX_CANVASES',
    scope: 'all',
    meaning: 'canvases an organization keeps',
    default: '1000',
  },
  {
    name: 'LAKE_ORG_MAX_USERS',
    scope: 'all',
    meaning: 'active people an organization keeps',
    default: '10000',
  },
  {
    name: 'LAKE_ORG_MAX_KEYS',
    scope: 'all',
    meaning: 'active service and team keys an organization holds',
    default: '500',
  },
  {
    name: 'LAKE_ORG_MAX_GRANTS',
    scope: 'all',
    meaning: 'table grants an organization keeps',
    default: '10000',
  },
  {
    name: 'LAKE_USER_MAX_TOKENS',
    scope: 'all',
    meaning: 'active personal access tokens one person holds',
    default: '100',
  },
  {
    name: 'LAKE_JOB_LEASE_SECONDS',
    scope: 'all',
    meaning: "a running job's lease (renewed every third of it)",
    default: '30',
  },
  {
    name: 'LAKE_HISTORY_RETENTION_DAYS',
    scope: 'serve',
    meaning:
      "how long finished syncs and send runs (with their events) and sources' log entries are kept (each source's newest sync and each send's newest run stay); 0 keeps them",
    default: '90',
  },
  {
    name: 'LAKE_SNAPSHOT_RETENTION_MINUTES',
    scope: 'all',
    meaning: 'how long a replaced table snapshot is kept for queries still reading it',
    default: '60',
  },
  {
    name: 'LAKE_GC_INTERVAL_MINUTES',
    scope: 'serve',
    meaning: 'how often lake serve collects old snapshots',
    default: '10',
  },
  { name: 'LAKE_WEBHOOK_ATTEMPTS', scope: 'all', meaning: 'attempts to deliver a webhook batch', default: '5' },
  {
    name: 'LAKE_WEBHOOK_RETRY_BASE_MS',
    scope: 'all',
    meaning: 'the first wait between webhook attempts (doubling)',
    default: '1000',
  },
  {
    name: 'LAKE_METADATA_URL',
    scope: 'all',
    meaning: 'the PostgreSQL database that replicas share for metadata, jobs and coordination',
    default: 'none: metadata.sqlite in the home',
  },
  {
    name: 'LAKE_DATA_DIR',
    scope: 'all',
    meaning: 'where lake tables and query results live (a directory every replica mounts)',
    default: 'the home',
  },
  {
    name: 'LAKE_DATA_URL',
    scope: 'all',
    meaning: 'an S3-compatible object store (s3://bucket/prefix) that keeps lake tables and query results',
    default: 'none: a directory',
  },
  {
    name: 'LAKE_S3_PATH_STYLE',
    scope: 'all',
    meaning: 'true: address the object store as host/bucket/key (MinIO, most self-hosted stores)',
    default: 'false',
  },
  {
    name: 'LAKE_CACHE_DIR',
    scope: 'all',
    meaning: "with LAKE_DATA_URL: the local cache of the object store's files (one per process)",
    default: 'cache in the home',
  },
  {
    name: 'LAKE_CACHE_MB',
    scope: 'all',
    meaning: "with LAKE_DATA_URL: the cache's size in MB (least recently used files go first)",
    default: '10240',
  },
  {
    name: 'LAKE_METRICS_ADDR',
    scope: 'serve',
    meaning: 'host:port where Prometheus scrapes GET /metrics (apart from the API)',
    default: 'none: no metrics',
  },
  {
    name: 'LAKE_METRICS_ORGANIZATIONS',
    scope: 'serve',
    meaning: 'how many organizations get their own organization label in metrics (the rest: other)',
    default: '0: one series, organization="all"',
  },
  {
    name: 'LAKE_SIGNING_KEY_FILE',
    scope: 'all',
    meaning: 'the key that signs download and stream URLs (the same file on every replica)',
    default: 'signing.key in the home',
  },
  {
    name: 'LAKE_SECRETS_KEY_FILE',
    scope: 'all',
    meaning: "the key that seals sources' and sends' secrets (the same file on every replica; never in the database)",
    default: 'secrets.key in the home',
  },
  {
    name: 'LAKE_PRICES_FILE',
    scope: 'all',
    meaning: 'the price table for lake usage (JSON)',
    default: 'prices.json in the home, else built in',
  },
];
