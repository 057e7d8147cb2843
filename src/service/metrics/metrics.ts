import { requireCommonJs } from '../../support/load-commonjs.js';

type PromClient = typeof import('prom-client');

/**
 * What lake counts for an operator's Prometheus. Services call these; without LAKE_METRICS_ADDR they do nothing
 * (NO_METRICS), and prom-client is never loaded. Labels are bounded: a route is its template, a status its number,
 * an outcome its status or error code, never an id.
 */
export interface LakeMetrics {
  httpRequest(route: string, method: string, status: number, seconds: number): void;
  /** An error answered, by its code (the catalogue's, so the values are bounded): which refusals a tenant meets. */
  apiError(code: string): void;
  /** A query ended: `succeeded`, `cancelled`, or the code it failed with (a limit that ended it among them). */
  queryEnded(outcome: string): void;
  /** A request refused by a rate limit: per `caller`, `organization` or `authentication` (failed attempts). */
  rateLimited(budget: string): void;
  /** A sync ended: its status and, when it succeeded, its rows. */
  syncEnded(status: string, rows: number, seconds: number): void;
  gcCollected(removed: number, bytes: number): void;
  /** A query worker process ended under a query: killed for a limit (its code), or crashed (`worker_crashed`). */
  workerLost(reason: string): void;
  /** Jobs whose process stopped renewing their lease, found by the lease sweep. */
  leasesLost(count: number): void;
  /** A query started in this process after waiting this long in its queue (0 when it started at once). */
  queryStarted(organizationId: string, waitSeconds: number): void;
  /** A value read when scraped (a queue's depth, a pool's connections). */
  gauge(name: string, help: string, read: GaugeReader): void;
  /** Values per organization read when scraped, labelled as `organizationLabel` allows (the queue per organization). */
  gaugeByOrganization(name: string, help: string, read: () => ReadonlyMap<string, number>): void;
  /** The exposition text and its media type. */
  render(): Promise<{ text: string; contentType: string }>;
}

export const NO_METRICS: LakeMetrics = {
  httpRequest: () => undefined,
  apiError: () => undefined,
  queryEnded: () => undefined,
  rateLimited: () => undefined,
  syncEnded: () => undefined,
  gcCollected: () => undefined,
  workerLost: () => undefined,
  leasesLost: () => undefined,
  queryStarted: () => undefined,
  gauge: () => undefined,
  gaugeByOrganization: () => undefined,
  render: async () => ({ text: '', contentType: 'text/plain' }),
};

/** Gauges read when scraped (queue depth, workers), registered by the services that know them. */
export type GaugeReader = () => number;

/**
 * The `organization` label's value: an organization's id for the first `limit` organizations this process sees
 * (LAKE_METRICS_ORGANIZATIONS, which bounds the label's values), `other` for the rest, and `all` when the limit is
 * 0 (the default: the number of organizations is bounded by nothing else).
 */
export function organizationLabeller(limit: number): (organizationId: string) => string {
  const labelled = new Set<string>();
  return (organizationId) => {
    if (limit <= 0) return 'all';
    if (labelled.has(organizationId)) return organizationId;
    if (labelled.size >= limit) return 'other';
    labelled.add(organizationId);
    return organizationId;
  };
}

/** The metrics of one `lake serve`, in its own registry (Prometheus text format). */
export function prometheusMetrics(options: { organizationLabels?: number } = {}): LakeMetrics {
  const prom = requireCommonJs('prom-client') as PromClient;
  const organization = organizationLabeller(options.organizationLabels ?? 0);
  const registry = new prom.Registry();
  prom.collectDefaultMetrics({ register: registry, prefix: 'lake_process_' });
  const requests = new prom.Counter({
    name: 'lake_http_requests_total',
    help: 'HTTP requests by route template, method and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const latency = new prom.Histogram({
    name: 'lake_http_request_duration_seconds',
    help: 'HTTP request latency by route template and method.',
    labelNames: ['route', 'method'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const errors = new prom.Counter({
    name: 'lake_api_errors_total',
    help: 'Error responses by error code (object_limit_reached, rate_limited, internal_error, …).',
    labelNames: ['code'],
    registers: [registry],
  });
  const queries = new prom.Counter({
    name: 'lake_queries_total',
    help: 'Queries ended, by outcome: succeeded, cancelled, or the error code (query_timeout, query_memory_limit, …).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const refusals = new prom.Counter({
    name: 'lake_rate_limit_refusals_total',
    help: 'Requests refused by a rate limit, by budget (caller, organization, authentication).',
    labelNames: ['budget'],
    registers: [registry],
  });
  const syncs = new prom.Counter({
    name: 'lake_syncs_total',
    help: 'Syncs ended, by status.',
    labelNames: ['status'],
    registers: [registry],
  });
  const syncRows = new prom.Counter({
    name: 'lake_sync_rows_total',
    help: 'Rows written by syncs that succeeded.',
    registers: [registry],
  });
  const syncSeconds = new prom.Histogram({
    name: 'lake_sync_duration_seconds',
    help: 'How long syncs ran, by status.',
    labelNames: ['status'],
    buckets: [1, 5, 15, 60, 300, 900, 3600],
    registers: [registry],
  });
  const gcFiles = new prom.Counter({
    name: 'lake_gc_removed_total',
    help: 'Snapshots, files and folders the collector removed.',
    registers: [registry],
  });
  const gcBytes = new prom.Counter({
    name: 'lake_gc_freed_bytes_total',
    help: 'Bytes the collector freed.',
    registers: [registry],
  });
  const workersLost = new prom.Counter({
    name: 'lake_query_workers_lost_total',
    help: 'Query worker processes that ended under a query, by why (a limit that killed it, or worker_crashed).',
    labelNames: ['reason'],
    registers: [registry],
  });
  const leases = new prom.Counter({
    name: 'lake_job_leases_lost_total',
    help: 'Jobs failed as worker_lost: their process stopped renewing the lease.',
    registers: [registry],
  });
  const queueWait = new prom.Histogram({
    name: 'lake_query_queue_wait_seconds',
    help: 'How long queries waited in this process for a worker before they started, by organization (see LAKE_METRICS_ORGANIZATIONS).',
    labelNames: ['organization'],
    buckets: [0, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
    registers: [registry],
  });
  return {
    queryStarted: (organizationId, waitSeconds) =>
      queueWait.observe({ organization: organization(organizationId) }, waitSeconds),
    gaugeByOrganization: (name, help, read) =>
      void new prom.Gauge({
        name,
        help,
        labelNames: ['organization'],
        registers: [registry],
        collect() {
          this.reset();
          const sums = new Map<string, number>();
          for (const [id, value] of read()) {
            const label = organization(id);
            sums.set(label, (sums.get(label) ?? 0) + value);
          }
          for (const [label, value] of sums) this.set({ organization: label }, value);
        },
      }),
    workerLost: (reason) => workersLost.inc({ reason }),
    leasesLost: (count) => leases.inc(count),
    httpRequest: (route, method, status, seconds) => {
      requests.inc({ route, method, status: String(status) });
      latency.observe({ route, method }, seconds);
    },
    apiError: (code) => errors.inc({ code }),
    queryEnded: (outcome) => queries.inc({ outcome }),
    rateLimited: (budget) => refusals.inc({ budget }),
    syncEnded: (status, rows, seconds) => {
      syncs.inc({ status });
      if (rows > 0) syncRows.inc(rows);
      syncSeconds.observe({ status }, seconds);
    },
    gcCollected: (removed, bytes) => {
      gcFiles.inc(removed);
      gcBytes.inc(bytes);
    },
    gauge: (name, help, read) =>
      void new prom.Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      }),
    render: async () => ({ text: await registry.metrics(), contentType: registry.contentType }),
  };
}
