import { setMaxListeners } from 'node:events';
import { DEFAULT_OBJECT_LIMITS, type ObjectLimits } from '../limits/object-limits.js';
import { mark } from '../../support/debug-timing.js';
import { inBackground, repeat } from '../core/repeat.js';
import { CredentialStore } from '../auth/credentials.js';
import type { Directory } from '../auth/directory.js';
import { DuckLakeAttachService } from '../catalog/ducklake-attach.js';
import { PersonalTokens } from '../auth/personal-tokens.js';
import { Signer } from '../files/url-signer.js';
import type { Home } from '../home/home.js';
import { secretsKeyFile } from '../home/key-files.js';
import { OrgKeys } from '../auth/org-keys.js';
import { CanvasService } from '../canvases/canvas-service.js';
import { CanvasStore } from '../canvases/canvas-store.js';
import { CatalogService } from '../catalog/catalog-service.js';
import { LogService } from '../logs/log-service.js';
import { LogStore } from '../logs/log-store.js';
import { UsageStore } from '../usage/usage-store.js';
import { loadPrices, UsageService } from '../usage/usage-service.js';
import { PermissionStore } from '../auth/permissions.js';
import { SendService } from '../sends/send-service.js';
import { sendSettingsFromEnv, type SendSettings } from '../sends/settings.js';
import { REAL_CLOCK, type Clock } from '../core/clock.js';
import { RateLimiter, rateLimitsFromEnv, type RateLimitSettings } from '../limits/rate-limiter.js';
import { StoredRateCells } from '../limits/rate-cell-store.js';
import { IdempotencyStore } from '../idempotency/idempotency.js';
import { JobService } from '../jobs/job-service.js';
import { JobStore } from '../jobs/job-store.js';
import { JobRuntime, type FailureReport } from '../jobs/job-runtime.js';
import { QueryStore } from '../queries/store.js';
import { jobSettingsFromEnv, type JobSettings } from '../jobs/settings.js';
import { HistoryStore } from '../jobs/history-store.js';
import { Lake } from '../storage/lake.js';
import { LakeLayout } from '../storage/layout.js';
import { ObjectStoreFiles } from '../files/object-store-files.js';
import { AuditLog } from '../auth/audit-log.js';
import { NO_METRICS, type LakeMetrics } from '../metrics/metrics.js';
import { PostgresMetadataDb } from '../store/postgres-db.js';
import { AuditStore } from '../auth/audit-store.js';
import { GrantService } from '../auth/grant-service.js';
import { OperatorCredentials } from '../auth/operator-credentials.js';
import { Organizations } from '../auth/organizations.js';
import { People } from '../auth/people.js';
import { gcSettingsFromEnv, LakeCollector, type GcSettings } from '../storage/collector.js';
import { QueryService } from '../queries/query-service.js';
import { QueryResults } from '../queries/query-results.js';
import { ResultReader } from '../queries/result-reader.js';
import { querySettingsFromEnv, type QuerySettings } from '../queries/settings.js';
import type { WorkerPoolSettings } from '../engine/worker-settings.js';
import { InProcessEngine } from '../engine/in-process-engine.js';
import { WorkerPool } from '../engine/worker-pool.js';
import { SecretBox } from '../sources/secret-box.js';
import { SourceService } from '../sources/source-service.js';
import { SyncService } from '../syncs/sync-service.js';
import { SourceViews } from '../syncs/source-views.js';
import { OutboundPolicy, outboundSettingsFromEnv, type OutboundSettings } from '../net/outbound.js';
import { LakeServiceError, isProgrammingError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import { OwnDatabaseGuard } from '../net/own-database.js';
import { metadataIdentity } from '../store/database-identity.js';
import { pingMetadata } from '../store/readiness-store.js';
import { sharedOutcome } from '../core/shared-outcome.js';
import { syncSettingsFromEnv, type SyncSettings } from '../syncs/settings.js';

/** How long one readiness check of the metadata store answers for every probe (GET /readyz). */
const READINESS_SHARED_MS = 1_000;

/** The domain services one API app serves; built once per home. */
export interface LakeServices {
  home: Home;
  /** Throws 503 service_unavailable while this server is shutting down or cannot reach its metadata store. */
  assertReady(): Promise<void>;
  directory: Directory;
  credentials: CredentialStore;
  personalTokens: PersonalTokens;
  /** Security-relevant actions, for the organization's owners. */
  audit: AuditLog;
  /** What an operator's Prometheus scrapes (LAKE_METRICS_ADDR); nothing is counted without it. */
  metrics: LakeMetrics;
  signer: Signer;
  /** Query results: pages, files, cursors and download links (routes, sends and canvases read them here). */
  results: QueryResults;
  lake: Lake;
  queries: QueryService;
  resultReader: ResultReader;
  permissions: PermissionStore;
  catalog: CatalogService;
  ducklakeAttach: DuckLakeAttachService;
  jobs: JobService;
  sources: SourceService;
  syncs: SyncService;
  orgKeys: OrgKeys;
  /** The service operator's tokens (opr_…) and what it does with organizations. */
  operators: OperatorCredentials;
  organizations: Organizations;
  /** An organization's people and their tokens, and its table grants, for its owners. */
  people: People;
  grants: GrantService;
  logs: LogService;
  usage: UsageService;
  /** Absent when rate limits are off. */
  rateLimiter: RateLimiter | undefined;
  canvases: CanvasService;
  sends: SendService;
  /** Removes what the lake no longer needs on disk (old snapshots, catalogs, leftovers); lake serve runs it periodically. */
  collector: LakeCollector;
  /** Sources with their latest syncs, as the source routes show them. */
  sourceViews: SourceViews;
  clock: Clock;
  /** Aborted when the services close, so long-lived work such as event streams ends. */
  closing: AbortSignal;
  /** For lake serve: sweeps lost jobs and expired queries in the background until close. */
  startBackgroundWork(): void;
  /** Ends open event streams (a server that is shutting down). */
  stopStreams(): void;
  /**
   * Lets work in flight finish for up to graceMs (default: none), stops and records what remains, then releases
   * engines. The home itself is closed by whoever opened it.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * What the services are built with: from the server's settings (src/service/server/settings.ts, parsed once from
 * the environment of lake serve or of the CLI in local mode); each absent part takes its documented default.
 */
export interface ServiceOptions {
  /** What to count for Prometheus (lake serve with LAKE_METRICS_ADDR); nothing otherwise. */
  metrics?: LakeMetrics;
  /** LAKE_PRICES_FILE: the price table usage reports use; prices.json in the home, else the defaults, without it. */
  pricesFile?: string;
  querySettings?: QuerySettings;
  /** Run queries in a pool of worker processes (lake serve); without it they run in this process (the local CLI). */
  workerPool?: WorkerPoolSettings;
  jobSettings?: JobSettings;
  clock?: Clock;
  /** False in a CLI that detaches: accepted syncs wait in the queue for a server to run them. */
  runSyncs?: boolean;
  /** Snapshot retention and collection interval; defaults from the environment. */
  gcSettings?: GcSettings;
  /** Webhook retry timing; defaults from the environment. */
  sendSettings?: SendSettings;
  /** Defaults from the environment (120 per caller, 600 per organization a minute); false turns them off. */
  rateLimits?: RateLimitSettings | false;
  /** Where sources and sends may connect; local mode's defaults (nothing refused) from the environment otherwise. */
  outbound?: OutboundSettings;
  /** Sync concurrency, source bounds and staging caps; from the environment otherwise. */
  syncSettings?: SyncSettings;
  /** How many sources, sends, canvases, people, keys, grants and tokens a tenant keeps; the defaults otherwise. */
  objectLimits?: ObjectLimits;
  /**
   * The server's structured log, for what goes wrong in background work with no request to answer (a send run's
   * unforeseen failure); nothing is written without one.
   */
  log?: (line: object) => void;
}

export async function createServices(home: Home, options: ServiceOptions = {}): Promise<LakeServices> {
  const layout = new LakeLayout(
    home.paths.data,
    home.objectStore
      ? new ObjectStoreFiles(home.paths.data, home.objectStore.settings, home.objectStore.cacheMaxBytes)
      : undefined,
    // A cache may be emptied or replaced: the catalog it would otherwise hold stays in the home.
    home.objectStore ? home.paths.root : home.paths.data,
  );
  const lake = new Lake(home.db, layout);
  const resultReader = new ResultReader();
  const clock = options.clock ?? REAL_CLOCK;
  const metrics = options.metrics ?? NO_METRICS;
  const audit = new AuditLog(new AuditStore(home.db), home.directory, clock);
  const limits = options.objectLimits ?? DEFAULT_OBJECT_LIMITS;
  const permissions = new PermissionStore(home.db, home.directory, audit, limits.grants);
  const usage = new UsageService(new UsageStore(home.db), lake, clock, () =>
    loadPrices(home.paths.root, options.pricesFile),
  );
  const jobStore = new JobStore(home.db, clock);
  const jobSettings = options.jobSettings ?? jobSettingsFromEnv({});
  const querySettings = options.querySettings ?? querySettingsFromEnv({});
  // In process, queries share this process's cores anyway: the organization's in-flight ceiling is the only bound.
  const inProcessSlots = Math.max(4, querySettings.maxInFlight);
  const engine = options.workerPool
    ? new WorkerPool(options.workerPool, querySettings, metrics)
    : new InProcessEngine(querySettings, inProcessSlots);
  const scheduling = options.workerPool
    ? { slots: options.workerPool.workers, perOrganization: options.workerPool.workersPerOrganization }
    : { slots: inProcessSlots, perOrganization: inProcessSlots };
  // What fails in background work (a lease round, a claim, a job past its own handling) is logged once, redacted.
  const failed: FailureReport = (work, error, jobId) =>
    options.log?.({
      level: 'error',
      msg: 'background work failed',
      work,
      ...(jobId ? { job: jobId } : {}),
      // An error of lake's own code keeps its stack: it is what whoever fixes it needs.
      error: redactSecrets(
        isProgrammingError(error)
          ? (error.stack ?? error.message)
          : error instanceof Error
            ? error.message
            : String(error),
      ),
    });
  const runtime = new JobRuntime(jobStore, jobSettings, failed);
  const history = new HistoryStore(home.db);
  const signer = new Signer(home.signingSecret);
  const queryStore = new QueryStore(home.db, jobStore);
  const results = new QueryResults(queryStore, layout, resultReader, signer, querySettings.orgResultStorageBytes);
  const jobs = new JobService(jobStore, runtime, permissions, clock);
  const queries = new QueryService({
    jobs,
    db: home.db,
    lake,
    store: queryStore,
    results,
    idempotency: new IdempotencyStore(home.db),
    permissions,
    runtime,
    settings: querySettings,
    metrics,
    engine,
    scheduling,
    usage,
    directory: home.directory,
  });
  await queries.purgeExpired();
  const secretBox = new SecretBox(secretsKeyFile(home.paths.secretsKey));
  const outbound = options.outbound ?? outboundSettingsFromEnv({}, 'local');
  const syncSettings = options.syncSettings ?? syncSettingsFromEnv({});
  const ownDatabase = home.metadataUrl
    ? OwnDatabaseGuard.forUrl(home.metadataUrl, metadataIdentity(home.db))
    : undefined;
  const sources = new SourceService(
    home.db,
    secretBox,
    permissions,
    async (organizationId, schema) => {
      const { tables, views } = await lake.visible(organizationId);
      return [...tables, ...views].some((object) => object.schema.toLowerCase() === schema);
    },
    new OutboundPolicy(outbound.sources, 'sources', ownDatabase),
    { maxTables: syncSettings.maxTables, maxColumns: syncSettings.maxColumns },
    clock,
    audit,
    limits.sources,
  );
  const syncs = new SyncService(
    home.db,
    lake,
    sources,
    jobStore,
    new IdempotencyStore(home.db),
    runtime,
    options.runSyncs ?? true,
    usage,
    clock,
    syncSettings,
    metrics,
    failed,
  );
  // A sync's events name its tables: a restricted caller sees only those it may read.
  jobs.viewEventsOf('sync', (principal, id) => syncs.eventView(principal, id));
  const sends = new SendService(
    home.db,
    jobStore,
    queries,
    results,
    home.credentials,
    home.directory,
    secretBox,
    clock,
    runtime,
    {
      ...(options.sendSettings ?? sendSettingsFromEnv({})),
      destinations: new OutboundPolicy(outbound.destinations, 'destinations', ownDatabase),
      maxPerOrganization: limits.sends,
    },
    usage,
    options.log,
    audit,
  );
  const collector = new LakeCollector(
    home.db,
    layout,
    lake.catalogs,
    jobStore,
    clock,
    options.gcSettings ?? gcSettingsFromEnv({}),
  );
  // Replicas share one budget per caller and organization through the store; one process keeps its own.
  const rateCells = home.db.dialect === 'postgres' ? new StoredRateCells(home.db, clock) : undefined;
  const rateLimiter =
    options.rateLimits === false
      ? undefined
      : new RateLimiter(options.rateLimits ?? rateLimitsFromEnv({}), clock, rateCells);
  metrics.gauge(
    'lake_query_queue_depth',
    'Queries waiting in this process for a worker.',
    () => queries.depth().waiting,
  );
  metrics.gaugeByOrganization(
    'lake_query_queue_depth_by_organization',
    'Queries waiting in this process for a worker, by organization (see LAKE_METRICS_ORGANIZATIONS).',
    () => queries.waitingByOrganization(),
  );
  metrics.gauge('lake_queries_running', 'Queries running in this process.', () => queries.depth().running);
  if (engine instanceof WorkerPool) {
    metrics.gauge('lake_query_workers_busy', 'Query worker processes running a query.', () => engine.stats().busy);
    metrics.gauge('lake_query_workers_idle', 'Query worker processes ready for one.', () => engine.stats().idle);
  }
  if (home.db instanceof PostgresMetadataDb) {
    const pool = home.db.pool;
    metrics.gauge(
      'lake_metadata_connections_in_use',
      'Metadata store connections in use.',
      () => pool.totalCount - pool.idleCount,
    );
    metrics.gauge(
      'lake_metadata_connections_waiting',
      'Requests waiting for a metadata connection.',
      () => pool.waitingCount,
    );
  }
  const closing = new AbortController();
  // Every open event stream listens for the close (up to 100 an organization): not a leak, so Node's warning past
  // ten listeners would only be noise in the log.
  setMaxListeners(0, closing.signal);
  const timers: NodeJS.Timeout[] = [];
  const personalTokens = new PersonalTokens(home.credentials, audit, limits.tokens);
  // Probes are unauthenticated and never rate-limited: their round trip to the store is shared, one a second at most.
  const metadataAnswers = sharedOutcome(READINESS_SHARED_MS, () => pingMetadata(home.db));
  return {
    home,
    async assertReady() {
      if (closing.signal.aborted)
        throw new LakeServiceError(
          'service_unavailable',
          'This server is shutting down; send work to another replica.',
          { retryAfterSeconds: 2 },
        );
      await metadataAnswers();
      await layout.files.check();
      const workers = engine instanceof WorkerPool ? engine.unableToStart() : undefined;
      if (workers !== undefined)
        throw new LakeServiceError('service_unavailable', `Not ready: ${workers}.`, { retryAfterSeconds: 2 });
    },
    directory: home.directory,
    credentials: home.credentials,
    personalTokens,
    audit,
    metrics,
    signer,
    results,
    lake,
    queries,
    resultReader,
    permissions,
    catalog: new CatalogService(lake, permissions),
    ducklakeAttach: new DuckLakeAttachService(home.directory, layout, home.metadataUrl),
    jobs,
    sources,
    syncs,
    orgKeys: new OrgKeys(home.credentials, home.directory, audit, limits.keys),
    operators: new OperatorCredentials(home.db),
    organizations: new Organizations(home.directory, home.credentials, audit),
    people: new People(home.directory, personalTokens, audit, limits.users),
    grants: new GrantService(permissions, home.directory, home.credentials),
    logs: new LogService(new LogStore(home.db), (principal, entries) => sources.access.logEntries(principal, entries)),
    usage,
    rateLimiter,
    canvases: new CanvasService(new CanvasStore(home.db), queries, results, home.directory, limits.canvases),
    sends,
    collector,
    sourceViews: new SourceViews(sources, syncs),
    clock,
    closing: closing.signal,
    stopStreams() {
      closing.abort();
    },
    startBackgroundWork() {
      syncs.startPolling();
      syncs.startScheduling();
      sends.startScheduling();
      // Replicas on one store run each other's queued queries when they have a worker free; one process alone
      // starts its own queue as workers free up and needs no look at the store for it.
      if (home.db.dialect === 'postgres') queries.startClaiming();
      // At start (what a killed process left) and then every interval. A collection that fails (a file in use, a
      // permission, the store unreachable) leaves things as they were; the next one retries, and it is logged.
      const failedAt = (work: string) => (error: unknown) => failed(work, error);
      const sweep = async (): Promise<void> => metrics.leasesLost(await jobs.sweep(true));
      inBackground(sweep, failedAt('job sweep'));
      const collect = async (): Promise<void> => {
        const report = await collector.collect();
        metrics.gcCollected(
          report.snapshots + report.orphaned_folders + report.catalog_files + report.staging_folders,
          report.bytes_freed,
        );
      };
      inBackground(collect, failedAt('snapshot collection'));
      // Past syncs and send runs, and sources' log entries, older than their retention (none when it is 0).
      const retention = jobSettings.historyRetentionSeconds ?? 0;
      const purgeHistory = async (): Promise<void> => {
        if (retention === 0) return;
        const cutoff = Math.floor(clock.now() / 1000) - retention;
        await history.purgeJobsBefore(cutoff);
        await history.purgeLogsBefore(cutoff);
      };
      inBackground(purgeHistory, failedAt('history retention'));
      timers.push(
        repeat(Math.max(1000, jobSettings.leaseMs / 2), sweep, failedAt('job sweep')),
        repeat(3_600_000, () => queries.purgeExpired(), failedAt('result retention')),
        repeat(3_600_000, purgeHistory, failedAt('history retention')),
        repeat(60_000, async () => rateCells?.forgetIdle(), failedAt('rate limit cells')),
        repeat(collector.settings.intervalMs, collect, failedAt('snapshot collection')),
      );
    },
    async close(graceMs = 0) {
      closing.abort();
      for (const timer of timers.splice(0)) clearInterval(timer);
      // Sends first: their runs wait on queries, which drain after.
      await sends.close(graceMs);
      mark('close: sends');
      await Promise.all([queries.drain(graceMs), syncs.close(graceMs)]);
      mark('close: queries, syncs');
      await resultReader.close();
      mark('close: reader');
      await lake.close();
    },
  };
}
