import { mark } from '../../support/debug-timing.js';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Principal } from '../auth/principal.js';
import { REAL_CLOCK, type Clock } from '../core/clock.js';
import { NO_METRICS, type LakeMetrics } from '../metrics/metrics.js';
import { LakeServiceError, isProgrammingError } from '../core/errors.js';
import { hashRequest, type IdempotencyStore } from '../idempotency/idempotency.js';
import { newId } from '../core/ids.js';
import type { JobRecord, JobStore } from '../jobs/job-store.js';
import type { UsageService } from '../usage/usage-service.js';
import { JobPool } from '../jobs/job-pool.js';
import { Scheduler } from '../jobs/scheduler.js';
import { nextRunAfter } from '../sources/source-schedule.js';
import type { FailureReport, JobRuntime } from '../jobs/job-runtime.js';
import type { Lake } from '../storage/lake.js';
import { principalIdOf } from '../auth/ownership.js';
import { lakeTableNames } from '../sources/lake-names.js';
import { HIDDEN_REASON } from '../sources/source-access.js';
import type { EventFeed, EventView } from '../jobs/job-service.js';
import type { SourceService } from '../sources/source-service.js';
import type { SourceRecord } from '../sources/source-store.js';
import { lock, type MetadataDb } from '../store/metadata-db.js';
import { extractorFor } from './extractors.js';
import type { SlotReport } from './cdc/cdc-sync.js';
import { SYNC_DEFAULTS, type SyncSettings } from './settings.js';
import { INTERNAL_SYNC_FAILURE } from './table-failure.js';
import { failedTablesText } from './pg-reads.js';
import { progressReporter } from './progress-reporter.js';
import { SyncStore, type SyncRequest, type TableProgress } from './sync-store.js';
import type { TableResult, TableTask } from './types.js';
import { preloadDuckDBLibrary } from '../engine/duckdb.js';

/** A sync as the domain knows it: its job's status and times, what was asked, and each table's progress. */
export interface SyncView {
  id: string;
  sourceId: string;
  status: JobRecord['status'];
  created: number;
  started: number | null;
  finished: number | null;
  fullRefresh: boolean;
  requestedTables: string[] | null;
  /** Who asked: a caller (`manual`) or the source's schedule. */
  trigger: 'manual' | 'schedule';
  tables: TableProgress[];
  /** Rows of the tables committed so far. */
  rows: number;
  error: { code: string; message: string } | null;
}

/** Rows of the tables that committed (a table's rows count once it is in the lake). */
export const committedRows = (tables: readonly TableProgress[]): number =>
  tables.reduce((sum, t) => sum + (t.phase === 'committed' ? t.completed : 0), 0);

/**
 * Syncs: each is a job of kind `sync`, queued durably on acceptance and run by a worker (in `lake serve`, and in the
 * CLI process in local mode). One live sync per source, decided under the write lock.
 */
export class SyncService {
  readonly store: SyncStore;
  private readonly pool: JobPool;
  private readonly scheduler: Scheduler<SourceRecord, string>;

  constructor(
    private readonly db: MetadataDb,
    private readonly lake: Lake,
    private readonly sources: SourceService,
    private readonly jobs: JobStore,
    private readonly idempotency: IdempotencyStore,
    runtime: JobRuntime,
    /** False for a CLI that detaches: syncs it accepts wait in the queue for a server. */
    private readonly runsSyncs: boolean,
    private readonly usage?: UsageService,
    clock?: Clock,
    private readonly settings: SyncSettings = SYNC_DEFAULTS,
    private readonly metrics: LakeMetrics = NO_METRICS,
    /** The server's log of background work: where an error of lake's own code in a sync goes, with its stack. */
    private readonly failed: FailureReport = () => undefined,
  ) {
    this.store = new SyncStore(db, clock);
    this.pool = new JobPool(runtime, 'sync', settings, (id, _organizationId, signal) => this.runClaimed(id, signal));
    this.scheduler = new Scheduler(
      'sync',
      {
        due: (now) => this.sources.store.due(now),
        // Another replica's scheduler may have read the same due source: only the one that moves its tick runs it.
        claimTick: (source, now) => {
          const setting = source.schedule;
          if (!setting || setting.nextSync === null) return Promise.resolve(false);
          return this.sources.store.claimTick(
            source.id,
            setting.nextSync,
            nextRunAfter(setting.schedule, now, setting.nextSync),
          );
        },
        start: (source) => this.startScheduled(source),
      },
      clock ?? REAL_CLOCK,
      runtime.failed,
    );
  }

  /**
   * The sync a source's schedule asks for: all its enabled tables, as the principal who set the schedule. Skipped
   * (undefined) while another sync of the source is queued or running: the next tick comes as usual.
   */
  private async startScheduled(source: SourceRecord): Promise<string | undefined> {
    const setting = source.schedule;
    if (!setting) return undefined;
    // A sync whose process died holds the source until its expired lease is noticed: notice it first.
    const live = await this.store.liveId(source.id);
    if (live) await this.jobs.expireLeases(live);
    const id = await this.db.transaction([lock.sourceSyncs(source.id)], async () => {
      if (await this.store.liveId(source.id)) return undefined;
      const id = newId('sync');
      await this.jobs.create({
        id,
        organizationId: source.organizationId,
        kind: 'sync',
        principalId: setting.principalId,
        credentialId: setting.credentialId,
      });
      await this.store.insert(id, source.id, { tables: null, fullRefresh: false, scheduled: true });
      return id;
    });
    if (id && this.runsSyncs) this.pool.offer(id, source.organizationId);
    return id;
  }

  /** For lake serve: starts the syncs whose source's schedule is due, checking every second. */
  startScheduling(): void {
    this.scheduler.start(1000);
  }

  /** One round of the schedule now (tests drive it instead of waiting for the timer); the syncs started. */
  async runDueSchedules(): Promise<string[]> {
    return this.scheduler.runDue();
  }

  /**
   * Records a sync of the source (202: recorded, not finished). Refused for a paused source (409 source_paused);
   * a source with a sync queued or running answers 409 sync_in_progress naming it, and no second run starts.
   */
  async submit(
    principal: Principal,
    sourceId: string,
    input: SyncRequest,
    idempotencyKey: string | undefined,
  ): Promise<{ sync: SyncView; replayed: boolean }> {
    // As the caller may see it: a restricted credential can name only the tables it may read.
    const source = await this.sources.get(principal, sourceId);
    const request = this.checkRequest(source, input);
    const scope = {
      organizationId: principal.organizationId,
      principalId: principalIdOf(principal),
      operation: `syncs.submit:${sourceId}`,
    };
    const requestHash = hashRequest(sourceId, JSON.stringify(request));
    const locks = [
      lock.sourceSyncs(sourceId),
      ...(idempotencyKey ? [lock.idempotencyKey(scope.organizationId, scope.principalId, idempotencyKey)] : []),
    ];
    const outcome = await this.db.transaction(locks, async () => {
      const replay = idempotencyKey ? await this.idempotency.replay(scope, idempotencyKey, requestHash) : undefined;
      if (replay) return { id: replay.resourceId, replayed: true };
      if (source.paused)
        throw new LakeServiceError('source_paused', `Source ${sourceId} is paused; resume it to sync.`);
      const live = await this.store.liveId(sourceId);
      if (live)
        throw new LakeServiceError(
          'sync_in_progress',
          `Source ${sourceId} already has sync ${live} queued or running; no second run was started. Follow that sync's job ${live}, or cancel it.`,
        );
      const id = newId('sync');
      await this.jobs.create({
        id,
        organizationId: principal.organizationId,
        kind: 'sync',
        principalId: principalIdOf(principal),
        credentialId: principal.credentialId,
      });
      await this.store.insert(id, sourceId, request);
      if (idempotencyKey)
        await this.idempotency.save(scope, idempotencyKey, { requestHash, resourceId: id, response: { id } });
      return { id, replayed: false };
    });
    if (!outcome.replayed && this.runsSyncs) this.pool.offer(outcome.id, principal.organizationId);
    const sync = await this.view(principal, outcome.id);
    if (!sync) throw new LakeServiceError('job_not_found', `Sync ${outcome.id} is gone.`);
    return { sync, replayed: outcome.replayed };
  }

  /** A sync as the principal may see it: job status and timestamps, with each table's phase and counts. */
  async view(principal: Principal, id: string): Promise<SyncView | null> {
    return this.visible(principal, await this.summary(id));
  }

  /** The latest sync of a source as the principal may see it; null before its first sync. */
  async latest(principal: Principal, sourceId: string): Promise<SyncView | null> {
    await this.jobs.expireLeases(await this.store.latestId(sourceId));
    const id = await this.store.latestId(sourceId);
    return id ? await this.view(principal, id) : null;
  }

  /**
   * Where a follower of the source's sync stream starts: its latest sync, after the event a Last-Event-ID
   * (`<sync id>:<number>`) names, seen as the principal may see it. An id of an older sync of the source starts
   * over at the latest; one of another source, or past the latest's last event, is refused.
   */
  async openStream(principal: Principal, sourceId: string, lastEventId: string | undefined): Promise<EventFeed | null> {
    const source = await this.sources.get(principal, sourceId);
    const latest = await this.store.latestId(source.id);
    let after = 0;
    if (lastEventId !== undefined) {
      const match = /^(sync_[0-9a-z]+):(\d{1,15})$/.exec(lastEventId.trim());
      const known = match ? await this.store.get(match[1] as string) : undefined;
      if (
        !match ||
        known?.sourceId !== source.id ||
        (latest !== undefined && match[1] === latest && Number(match[2]) > (await this.jobs.lastSeq(latest)))
      ) {
        throw new LakeServiceError(
          'invalid_last_event_id',
          `Last-Event-ID '${lastEventId.trim().slice(0, 64)}' is not an event id of this source's sync stream.`,
          { param: 'Last-Event-ID' },
        );
      }
      if (match[1] === latest) after = Number(match[2]);
    }
    if (!latest) return null;
    // The opening caller was just checked (sources.get, above); a later one is checked again.
    const viewAs = async (caller: Principal): Promise<EventView> => {
      await this.sources.get(caller, source.id);
      return this.sources.access.eventView(caller, source.id);
    };
    const view = await this.sources.access.eventView(principal, source.id);
    return { jobId: latest, afterSeq: after, idOf: (seq) => `${latest}:${seq}`, view, viewAs };
  }

  /** How the principal sees the events of a sync job (for GET /jobs/{id}/events). */
  async eventView(principal: Principal, id: string): Promise<EventView> {
    const sync = await this.store.get(id);
    return sync ? this.sources.access.eventView(principal, sync.sourceId) : async (_type, data) => data;
  }

  private async summary(id: string): Promise<SyncView | null> {
    const sync = await this.store.get(id);
    const job = await this.jobs.getById(id);
    if (!sync || !job) return null;
    const tables = Object.values(sync.progress);
    return {
      id,
      sourceId: sync.sourceId,
      status: job.status,
      created: job.created,
      started: job.started,
      finished: job.finished,
      // Syncs recorded before requests were stored read as what they were: all tables, not a full refresh.
      fullRefresh: sync.request.fullRefresh ?? false,
      requestedTables: sync.request.tables ?? null,
      trigger: sync.request.scheduled === true ? 'schedule' : 'manual',
      tables,
      rows: committedRows(tables),
      error: job.errorCode === null ? null : { code: job.errorCode, message: job.errorMessage ?? '' },
    };
  }

  /** A restricted credential sees only the tables it may read, counted alone, and no names in a failure. */
  private async visible(principal: Principal, sync: SyncView | null): Promise<SyncView | null> {
    if (sync === null || !(await this.sources.access.accessFor(principal)).restricted) return sync;
    const tables = await this.sources.access.mentions(principal, sync.sourceId, sync.tables);
    const error = sync.error?.code === 'tables_failed' ? { ...sync.error, message: HIDDEN_REASON } : sync.error;
    return { ...sync, tables, rows: committedRows(tables), error };
  }

  /**
   * For lake serve: takes queued syncs (recorded by any process or replica) every second while it has room, oldest
   * first, skipping organizations at their cap here; replicas claiming at once each take a different one.
   */
  startPolling(): void {
    this.pool.startPolling(1000);
  }

  /** Stops taking work and waits for the syncs in progress, which are told to stop after graceMs. */
  async close(graceMs: number): Promise<void> {
    this.scheduler.stop();
    await this.pool.close(graceMs);
  }

  /** The tables named must be the source's own (each refusal names the entry and suggests the likely one). */
  private checkRequest(source: SourceRecord, request: SyncRequest): SyncRequest {
    request.tables?.forEach((t, i) => {
      if (source.tables.some((s) => `${s.schema}.${s.name}` === t)) return;
      const candidates = source.tables
        .map((s) => `${s.schema}.${s.name}`)
        .filter((k) => k.endsWith(`.${t}`) || k.toLowerCase() === t.toLowerCase());
      const suggestion =
        candidates.length > 0
          ? ` Did you mean ${candidates.join(' or ')}?`
          : " Name it as schema.table (the source's tables are listed with the source).";
      throw new LakeServiceError(
        'parameter_invalid',
        `tables[${i}] '${t.slice(0, 128)}' is not a table of this source.${suggestion}`,
        { param: `tables[${i}]` },
      );
    });
    return { tables: request.tables, fullRefresh: request.fullRefresh };
  }

  /**
   * Keeps what the source reports of its CDC slot on the source, and warns (on the source and in its logs) when the
   * WAL the slot keeps passes the source's limit (slot_wal_warning_mb): WAL the source cannot recycle fills its disk.
   */
  private async recordSlot(source: SourceRecord, syncId: string, slot: SlotReport | null): Promise<void> {
    if (slot === null) return this.sources.store.update(source.id, { cdcSlot: null });
    const limitMb = Number(source.config.slot_wal_warning_mb ?? 1024);
    const keptMb = Math.round(slot.retainedBytes / 1_048_576);
    const warning =
      slot.retainedBytes > limitMb * 1_048_576
        ? `The replication slot ${slot.name} keeps ${keptMb} MB of WAL on the source, past the ${limitMb} MB limit (slot_wal_warning_mb): sync more often, or take the tables off cdc so lake drops the slot.`
        : null;
    await this.sources.store.update(source.id, {
      cdcSlot: {
        slot: slot.name,
        publication: slot.name,
        confirmedLsn: slot.confirmedLsn,
        retainedWalBytes: slot.retainedBytes,
        walStatus: slot.walStatus,
        checked: Math.floor(this.jobs.clockNow() / 1000),
        warning,
      },
    });
    if (warning) await this.store.log(source.organizationId, source.id, 'warning', null, warning, { sync: syncId });
  }

  /** Runs a sync this process holds (the runtime renews its lease and turns a cancel into the signal). */
  private async runClaimed(id: string, signal: AbortSignal): Promise<void> {
    const started = performance.now();
    let rows = 0;
    try {
      rows = await this.run(id, signal);
    } catch (error) {
      await this.jobs.finish(id, 'failed', {
        code: 'sync_failed',
        message: error instanceof Error ? error.message : String(error),
      });
    }
    const ended = await this.jobs.getById(id).catch(() => undefined);
    this.metrics.syncEnded(ended?.status ?? 'failed', rows, (performance.now() - started) / 1000);
  }

  /** Runs a claimed sync to its end; returns the rows it wrote. */
  private async run(id: string, signal: AbortSignal): Promise<number> {
    const sync = await this.store.get(id);
    const job = await this.jobs.getById(id);
    if (!sync || !job) return 0;
    const source = await this.sources.store.get(job.organizationId, sync.sourceId);
    if (!source) {
      await this.jobs.finish(id, 'failed', {
        code: 'source_not_found',
        message: 'The source was deleted before its sync ran.',
      });
      return 0;
    }
    mark('sync: job running');
    // Its write will load DuckDB: its library loads on another thread meanwhile (preloadDuckDBLibrary).
    void preloadDuckDBLibrary();
    const lakeSchema = source.lakeSchema;
    // Names are unique now; sources made before that may share a schema, which only the oldest may write.
    const holder = await this.sources.store.schemaHolder(job.organizationId, lakeSchema, source.id);
    if (holder && (holder.created < source.created || (holder.created === source.created && holder.id < source.id))) {
      await this.jobs.finish(id, 'failed', {
        code: 'source_name_conflict',
        message: `Lake schema ${lakeSchema} belongs to source ${holder.id}; this source may not write into it. Rename this source (or create it again under another name).`,
      });
      return 0;
    }
    // Tables that appeared in the source since it was last discovered are added, off, and the source's log says so:
    // found by every sync, not only by a connection test, and never synced without someone opting in. Looked for
    // while the sync reads: a table added off changes nothing this sync reads, nor the lake names of those it does
    // (a new table's name is chosen after theirs), and the discovery's round trips no longer delay every sync.
    const discovering = this.sources.addNewTables(source, async (added) => {
      for (const table of added)
        await this.store.log(
          job.organizationId,
          source.id,
          'schema_change',
          table,
          `New table ${table} found in the source; it is off until enabled: lake sources update ${source.id} --enable ${table}`,
          { sync: id, added_table: table },
        );
    });
    // Awaited on every path below; a failure to record new tables fails the sync there, as it did before it ran.
    discovering.catch(() => undefined);
    const chosen = source.tables.filter((t) =>
      sync.request.tables ? sync.request.tables.includes(`${t.schema}.${t.name}`) : t.enabled,
    );
    // Unique in the schema, case-insensitively (lakeTableNames): two tables never land in one lake table.
    const readNames = lakeTableNames(source);
    const tasks: TableTask[] = chosen.map((table) => ({
      table,
      key: `${table.schema}.${table.name}`,
      lakeSchema,
      lakeTable: readNames.get(`${table.schema}.${table.name}`) as string,
      incremental: table.mode === 'incremental' && !sync.request.fullRefresh,
      softDeletes: source.config.deletes === 'soft',
      ...(table.mode === 'cdc' && sync.request.fullRefresh ? { cdcCopy: true } : {}),
    }));
    const reporter = await progressReporter(this.store, this.jobs, id, tasks);
    const syncedAt = new Date(this.jobs.clockNow()).toISOString();
    const stagingDir = join(this.lake.layout.homeRoot, 'staging', id);
    const states = await this.store.states(source.id);
    mark('sync: tasks planned');
    let results: TableResult[];
    try {
      const extract = extractorFor(source.connector);
      if (!extract) throw new Error(`the ${source.connector} connector does not sync`);
      results = await extract({
        source,
        connectSettings: async () => ({
          ...(await this.sources.connectSettings(source)),
          maxRecordBytes: this.settings.maxRecordBytes,
        }),
        onSlot: (slot) => this.recordSlot(source, id, slot),
        tasks,
        states,
        lake: this.lake,
        organizationId: job.organizationId,
        stagingDir,
        syncedAt,
        reporter,
        signal,
        limits: this.settings,
        reportInternal: (error) => this.failed('sync', error, id),
      });
    } catch (error) {
      if (signal.aborted) {
        await this.jobs.finish(id, 'cancelled', {
          code: 'cancelled',
          message: 'The sync was cancelled; tables committed before it stay.',
        });
        return 0;
      }
      const internal = isProgrammingError(error);
      if (internal) this.failed('sync', error, id);
      const message = internal ? INTERNAL_SYNC_FAILURE : error instanceof Error ? error.message : String(error);
      await this.store.log(job.organizationId, source.id, 'error', null, `The sync failed: ${message}`, { sync: id });
      await this.jobs.finish(id, 'failed', {
        code: error instanceof LakeServiceError && error.code === 'host_not_allowed' ? error.code : 'sync_failed',
        message: `The sync failed: ${message}.`,
      });
      return 0;
    } finally {
      rmSync(stagingDir, { recursive: true, force: true });
      await reporter.flushed();
      await discovering.catch(() => undefined);
    }
    // Every lake name the source's tables hold now, new ones included: a table's old lake table is retired below
    // only when no table claims its name.
    const lakeTables = lakeTableNames((await discovering).source);
    for (const result of results) {
      if (result.error) {
        await this.store.log(
          job.organizationId,
          source.id,
          'error',
          result.task.key,
          `Table ${result.task.key} failed: ${result.error}`,
          { sync: id },
        );
        continue;
      }
      // A table given a new lake table (it collided with another's, in case or after flattening) leaves the old one:
      // it is taken out of the catalog, so the two never shadow each other again. Retired before the state names
      // the new one: a process killed in between retires it again (a no-op once done) on the next sync.
      const before = states.get(result.task.key)?.lakeTable;
      if (before !== undefined && before !== result.task.lakeTable && ![...lakeTables.values()].includes(before))
        await this.lake.tables.retire(job.organizationId, lakeSchema, before);
      await this.store.saveState(
        source.id,
        result.task.table.schema,
        result.task.table.name,
        { cursorValue: result.cursorValue, columns: result.columns, softDeletes: result.task.softDeletes },
        result.task.lakeSchema,
        result.task.lakeTable,
      );
      await this.usage?.record(job.organizationId, 'rows_synced', result.transferred);
    }
    const failed = results.filter((r) => r.error);
    if (signal.aborted)
      await this.jobs.finish(id, 'cancelled', {
        code: 'cancelled',
        message: 'The sync was cancelled; tables committed before it stay.',
      });
    else if (failed.length > 0) {
      // Each table's reason, so the sync object, the stream's last event and a follower all say why: the first few
      // (a source of 2,000 failing tables made a message of megabytes, kept and shown with every list of jobs).
      const reasons = failedTablesText(failed.map((f) => ({ key: f.task.key, reason: f.error ?? '' })));
      const tables = `${tasks.length} table${tasks.length === 1 ? '' : 's'}`;
      const committed = failed.length === tasks.length ? 'No table was committed.' : 'The other tables were committed.';
      await this.jobs.finish(id, 'failed', {
        code: 'tables_failed',
        message: `${failed.length} of ${tables} failed: ${reasons}. ${committed}`,
      });
    } else await this.jobs.finish(id, 'succeeded');
    return results.reduce((sum, r) => sum + (r.error ? 0 : r.transferred), 0);
  }
}
