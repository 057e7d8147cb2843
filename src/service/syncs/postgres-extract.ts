import { createHash } from 'node:crypto';
import { mark } from '../../support/debug-timing.js';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import type { to as CopyTo } from 'pg-copy-streams';
import { pgDriver } from '../../support/source-drivers.js';
import { classifyPostgresFailure } from '../connectors/postgres.js';
import { quoteIdentifier, quoteLiteral } from '../engine/duckdb.js';
import { MAX_MERGES } from '../storage/lake.js';
import { mergeableColumns, type MergeCounts } from '../storage/ducklake/merge.js';
import { isTaggedType } from '../storage/ducklake/types.js';
import { readSourceKeys } from './pg-keys.js';
import { compactionDeletes, compactionSql } from './compaction.js';
import { CDC_TAG, PARTITIONS_TAG, prepareCdc, type CdcInput, type CdcSnapshot } from './cdc/cdc-sync.js';
import { stagedName } from './pg-types.js';
import { LoadQueue, MAX_WAITING_LOADS } from './load-queue.js';
import { MAX_SEGMENT_BYTES, removeStaged, ROWS_PER_SEGMENT, SegmentedStaging } from './segments.js';
import { TenantConnections } from '../connectors/tenant-connections.js';
import { StagingBudget } from './staging-budget.js';
import { failedTable, failureReason } from './table-failure.js';
import { rereadOnly } from './cursor-reread.js';
import { LakeServiceError } from '../core/errors.js';
import { DELETED_AT, SYNCED_AT } from '../sources/lake-names.js';
import { DEFAULT_SYNC_CONNECTIONS, RangeBoard, RangeRead } from './table-ranges.js';
import type { TableResult, TableTask } from './types.js';
import { startSourceCopy } from './pg-copy.js';
import { planTableRead } from './pg-table-plan.js';
import { joinSnapshot, openSession } from './pg-session.js';
import { csvLineOptions, readsExpected, syncFailure, tableRanges } from './pg-reads.js';

/** DuckDB's memory while loading one table; with insertion order off, large tables stream through it. */
const SYNC_MEMORY_LIMIT = '256MB';

/** A sync of a PostgreSQL source: what its cdc part takes (CdcInput), and the tables it reads. */
export interface PostgresSyncInput extends CdcInput {
  tasks: readonly TableTask[];
}

/**
 * Extracts every table in one consistent snapshot of the source, over several connections at once, as pg_dump -j
 * does: the first connection opens a REPEATABLE READ, READ ONLY transaction and exports its snapshot
 * (`pg_export_snapshot()`); the others import it (`SET TRANSACTION SNAPSHOT`) before reading anything, so every
 * table comes from the same point in time. Each connection takes the next table from a shared list. A table is
 * streamed with `COPY (SELECT …) TO STDOUT` into staging files through a pipeline, so memory stays bounded whatever
 * its size; DuckDB casts the text exactly into a new zstd Parquet snapshot, merged on the primary key for
 * incremental tables, and commits it. A table that fails does not undo the others.
 */
export async function syncPostgres(input: PostgresSyncInput): Promise<TableResult[]> {
  const cdcTasks = input.tasks.filter((t) => t.table.mode === 'cdc');
  const cdc = await prepareCdc(input, cdcTasks);
  try {
    const others = input.tasks.filter((t) => t.table.mode !== 'cdc');
    const extracted = await extractTables({ ...input, tasks: [...others, ...cdc.copyTasks] }, cdc.snapshot);
    const copied = extracted.filter((r) => r.task.table.mode === 'cdc');
    return [
      ...extracted.filter((r) => r.task.table.mode !== 'cdc'),
      ...cdc.refused,
      ...(await cdc.applyChanges(copied, input.signal)),
    ];
  } finally {
    await cdc.close();
  }
}

/** Reads the tasks' tables in one snapshot (a CDC slot's, when one was just created) and commits each. */
async function extractTables(input: PostgresSyncInput, cdcSnapshot: CdcSnapshot | undefined): Promise<TableResult[]> {
  const { to } = pgDriver().copyStreams;
  const allowed = Math.max(1, Number(input.settings.config.sync_connections ?? DEFAULT_SYNC_CONNECTIONS));
  const clients: pg.Client[] = [];
  const connections = new TenantConnections(input.limits, input.signal);
  try {
    clients.push(await openSession(input.settings, connections, cdcSnapshot ? { snapshot: cdcSnapshot.name } : {}));
    mark('sync: source session open');
  } catch (error) {
    await connections.close();
    if (error instanceof LakeServiceError) throw error;
    throw connections.failure ?? new Error(`cannot connect to the source (${classifyPostgresFailure(error)})`);
  }
  const results: TableResult[] = new Array(input.tasks.length);
  let connectionError: unknown;
  try {
    const leader = clients[0] as pg.Client;
    const session = (
      await leader.query<{ s: number; v: number }>(
        "SELECT scale('0'::money::numeric) AS s, current_setting('server_version_num')::int AS v",
      )
    ).rows[0];
    // The session's money format, asked once: every connection shares the leader's settings.
    const moneyScale = session?.s ?? 2;
    // Before 14, PostgreSQL has no TID range scan: each range of a table would scan all of it.
    const rangesPerTable = (session?.v ?? 0) >= 140_000 ? allowed : 1;
    // No more connections than there are tables and ranges to read at once.
    const wanted = allowed === 1 ? 1 : Math.min(allowed, await readsExpected(leader, input.tasks, rangesPerTable));
    clients.push(...(await joinSnapshot(leader, wanted - 1, input.settings, connections)));
    // Every reader is in the slot's snapshot now: the replication connection that holds it may go.
    await cdcSnapshot?.shared();
    mkdirSync(input.stagingDir, { recursive: true, mode: 0o700 });
    const shared: SharedExtraction = {
      loads: new LoadQueue(MAX_WAITING_LOADS),
      board: new RangeBoard(),
      rangesPerTable: Math.min(rangesPerTable, clients.length),
      staging: new StagingBudget(input.limits),
      connections,
    };
    const finishing: Promise<void>[] = [];
    let next = 0;
    // Each connection takes the next range or table until none is left, or the connections are ended.
    const readTables = async (client: pg.Client): Promise<void> => {
      while (!connections.ended) {
        // Another table's range first: a large table is read side by side before a new table is begun. With no
        // table left, a connection waits for the ranges of those still being read.
        const range = shared.board.take() ?? (next >= input.tasks.length ? await shared.board.next() : undefined);
        if (range) {
          await client.query('SAVEPOINT lake_table');
          await client.query(
            (await range.run(client)) ? 'RELEASE SAVEPOINT lake_table' : 'ROLLBACK TO SAVEPOINT lake_table',
          );
          continue;
        }
        if (next >= input.tasks.length) break;
        const index = next++;
        // Counted from the moment it is taken, so an idle connection waits for its ranges.
        shared.board.startReading();
        const task = input.tasks[index] as TableTask;
        // A failed statement aborts the whole transaction; a savepoint per table keeps the snapshot for the others.
        await client.query('SAVEPOINT lake_table');
        let sourceDone!: (ok: boolean) => void;
        const readFromSource = new Promise<boolean>((resolve) => (sourceDone = resolve));
        void readFromSource.then(() => shared.board.doneReading());
        const result = syncTable(client, to, task, { ...input, ...shared }, moneyScale, sourceDone).then(
          (r) => {
            sourceDone(r.error === undefined);
            results[index] = r;
          },
          (error: unknown) => {
            sourceDone(false);
            throw error;
          },
        );
        finishing.push(result);
        // Awaited below (allSettled); this keeps a failure from crashing the process before then.
        result.catch(() => {});
        // The connection moves on once the table is read; its loading and commit finish meanwhile.
        await client.query(
          (await readFromSource) ? 'RELEASE SAVEPOINT lake_table' : 'ROLLBACK TO SAVEPOINT lake_table',
        );
      }
    };
    await Promise.all(
      clients.map(async (client) => {
        // A connection that fails between tables (dropped, or ended by a cancel or a bound) ends them all: the
        // tables it was reading fail, and the others stop with it rather than wait on it.
        try {
          await readTables(client);
        } catch (error) {
          connectionError ??= error;
          connections.fail(error instanceof Error ? error : new Error(String(error)));
        }
      }),
    );
    // Every table is read: the source's snapshot and connections are let go now, while the last loads and commits
    // (DuckDB's, on connections of their own) finish; every one ends before the sync does.
    const sourceEnded = (async () => {
      if (!connections.ended) await Promise.all(clients.map((client) => client.query('COMMIT')));
      await connections.close();
    })();
    sourceEnded.catch(() => undefined);
    await Promise.allSettled(finishing);
    await sourceEnded;
  } finally {
    await connections.close();
  }
  // A cancel ends the sync as cancelled; an idle source or the time bound fails it with that reason, and with the
  // reasons of tables that had failed before (a table's own failure can be what left its connection idle).
  const stopped = input.signal.aborted ? undefined : (connections.failure ?? connectionError);
  if (stopped !== undefined) throw syncFailure(stopped, results);
  // Tables not reached before a cancel have no result.
  return results.filter((r): r is TableResult => r !== undefined);
}

/** What the connections of one sync share while extracting. */
interface SharedExtraction {
  loads: LoadQueue;
  board: RangeBoard;
  /** Bytes staged on disk, against the per-table and per-sync caps. */
  staging: StagingBudget;
  connections: TenantConnections;
  /** Ranges a large table may be read in at once: the sync's connections, or 1 where ranges would not pay. */
  rangesPerTable: number;
}

/**
 * Syncs one table: reads it from the source over `client`, then loads and commits it. `sourceDone` is told as soon
 * as the source's part is over (true) or failed (false), so the connection can move on while the load finishes.
 */
async function syncTable(
  client: pg.Client,
  to: typeof CopyTo,
  task: TableTask,
  input: PostgresSyncInput & SharedExtraction,
  moneyScale: number,
  sourceDone: (ok: boolean) => void,
): Promise<TableResult> {
  const { table } = task;
  const state = input.states.get(task.key);
  let summary = state?.columns ?? [];
  // Staging files are named by a digest of the table: a source's names may be long, differ only in case, or hold
  // characters no file name may.
  const base = `t_${createHash('sha256').update(task.key).digest('hex').slice(0, 20)}`;
  try {
    // The table an incremental read merges into: its column types type the changed rows (planTableRead).
    const before = task.incremental
      ? await input.lake.tables.get(input.organizationId, task.lakeSchema, task.lakeTable)
      : undefined;
    const { columns, incremental, where, from, plans, lakeName, lakeKey, newCursor } = await planTableRead(
      client,
      task,
      state,
      moneyScale,
      input.reporter,
      (columns) => (summary = columns),
      before && new Map(before.snapshot.columns.map((c) => [c.name, c.type])),
    );
    mark(`${task.key}: read planned`);
    const total = incremental ? null : table.estimatedRows;
    input.reporter.phase(task, 'extracting', { completed: 0, total });
    const notNull = new Set([
      ...columns.filter((c) => c.notNull).map((c) => lakeName.get(c.name) as string),
      SYNCED_AT,
    ]);
    const previous = incremental ? before : undefined;
    const merging = previous !== undefined && lakeKey.length > 0;
    // Changed rows are merged into the table as files of their own, with delete files for the rows they replace
    // (the cost follows the change); a table with MAX_MERGES merges on top of its last full write is compacted
    // instead: merged whole into new files that replace all of its own.
    // A table with a column DuckDB reads positions through (file_row_number, file_index) cannot take delete files.
    const layering = merging && previous.snapshot.layers - 1 < MAX_MERGES && mergeableColumns(plans.map((p) => p.name));
    const compacting = merging && !layering;
    // Delete detection: the source's keys, read in the same snapshot once the changed rows are, on the same
    // connection; a lake row whose key is not among them is deleted (a full refresh needs none: it is the source).
    const detecting = merging && incremental && task.table.detectDeletes === true;
    let keys: Awaited<ReturnType<typeof readSourceKeys>> | undefined;
    let deletedRows = 0;
    const readKeys = async (): Promise<void> => {
      if (!detecting) return;
      keys = await readSourceKeys({
        client,
        to,
        keyPlans: lakeKey.map((k) => plans.find((p) => p.name === k) as (typeof plans)[number]),
        from,
        stagingDir: input.stagingDir,
        base,
        signal: input.signal,
        bounds: { budget: input.staging, table: task.key, maxSegmentBytes: Number.POSITIVE_INFINITY },
      });
    };
    let transferred = 0;
    const counted = (n: number): void => {
      transferred = n;
      input.reporter.rows(task, n);
    };
    const copySql = (range: string): string =>
      `COPY (SELECT ${plans.map((p) => p.select).join(', ')} FROM ${from}${where}${range ? `${where ? ' AND' : ' WHERE'} ${range}` : ''}) TO STDOUT WITH (FORMAT csv)`;
    // Only a full refresh of a plain table (or materialized view) is split: a view has no blocks to range over.
    const ranges =
      !incremental && input.rangesPerTable > 1
        ? await tableRanges(client, table.schema, table.name, input.rangesPerTable)
        : [];
    const reader = (file: string, longestRecord: number): string =>
      `read_csv(${quoteLiteral(file)}, columns = {${plans.map((p, i) => `'c${i}': '${p.csvType}'`).join(', ')}}, header = false, auto_detect = false, quote = '"', escape = '"', allow_quoted_nulls = false, delim = ',', ${csvLineOptions(longestRecord)})`;
    const batchOf = (file: string, longestRecord: number): string =>
      `SELECT ${plans.map((p, i) => `${p.load(stagedName(i))} AS ${quoteIdentifier(p.name)}`).join(', ')}, TIMESTAMPTZ ${quoteLiteral(input.syncedAt)} AS ${SYNCED_AT}${task.softDeletes ? `, NULL::TIMESTAMPTZ AS ${DELETED_AT}` : ''} FROM ${reader(file, longestRecord)}`;
    const committed = await input.lake.writeSnapshot(
      input.organizationId,
      task.lakeSchema,
      task.lakeTable,
      async (writer) => {
        // Every COPY is started only once DuckDB is ready: a COPY that nobody reads would hold its connection for ever.
        const startCopy = (on: pg.Client, sql: string) => startSourceCopy(to, on, sql, input.signal);
        const bounds = (
          maxSegmentBytes: number,
        ): { budget: StagingBudget; table: string; maxSegmentBytes: number } => ({
          budget: input.staging,
          table: task.key,
          maxSegmentBytes,
        });
        if (compacting) {
          // A merge reads its batch twice, beside the previous snapshot: stage it whole first, as one segment.
          let staged = { file: join(input.stagingDir, `${base}.empty.csv`), longest: 0 };
          writeFileSync(staged.file, '', { mode: 0o600 });
          const { copy, stop } = startCopy(client, copySql(''));
          const whole = new SegmentedStaging(
            input.stagingDir,
            base,
            Number.POSITIVE_INFINITY,
            (file, longest) => void (staged = { file, longest }),
            counted,
            bounds(Number.POSITIVE_INFINITY),
          );
          await pipeline(copy, whole).finally(stop);
          await readKeys();
          sourceDone(true);
          input.reporter.phase(task, 'loading');
          const connection = await writer.connection();
          const compaction = compactionSql({
            current: input.lake.rowsSql(previous as NonNullable<typeof previous>),
            batch: batchOf(staged.file, staged.longest),
            key: lakeKey,
            ...(keys ? { keysSql: keys.sql } : {}),
            softDeletes: task.softDeletes,
            syncedAt: input.syncedAt,
          });
          deletedRows = await compactionDeletes(connection, compaction);
          return input.loads.enqueue(() => writer.copy(compaction.rows, 0));
        }
        // A full refresh stages segments and turns each into a Parquet part while the next is still arriving, so
        // loading overlaps extraction. DuckDB reads a file on all its threads (a pipe it would read on one).
        let rows = 0;
        let parts = 0;
        let abandoned = false;
        const loaded: Promise<void>[] = [];
        const onSegment = async (segment: string, longest: number, bytes: number): Promise<void> => {
          const index = parts++;
          const load = input.loads.enqueue(async () => {
            // After one failure the table will not commit: the loads still queued are skipped.
            if (abandoned) return;
            try {
              rows += await writer.copy(batchOf(segment, longest), index);
              mark(`${task.key}: part ${index} loaded`);
            } catch (error) {
              abandoned = true;
              throw error;
            }
            rmSync(segment, { force: true });
            input.staging.release(task.key, bytes);
          });
          // Handled here so a failure waits for the final await instead of crashing the process meanwhile (the
          // COPY runs to its end: a COPY cut short would leave the connection unusable for the next table).
          load.catch(() => {});
          loaded.push(load);
          await input.loads.room();
        };
        // A large table is read in block ranges over several connections at once, all in the sync's one snapshot.
        const conditions = ranges.length > 0 ? ranges : [''];
        const readCounts = conditions.map(() => 0);
        let readError: unknown;
        const reads = conditions.map(
          (condition, i) =>
            new RangeRead(async (on) => {
              const { copy, stop } = startCopy(on, copySql(condition));
              const staging = new SegmentedStaging(
                input.stagingDir,
                `${base}.r${i}`,
                input.segmentRows ?? ROWS_PER_SEGMENT,
                onSegment,
                (n) => {
                  readCounts[i] = n;
                  counted(readCounts.reduce((a, b) => a + b, 0));
                },
                bounds(MAX_SEGMENT_BYTES),
              );
              // Both must finish: a COPY that fails part-way never lets a short table be committed.
              return pipeline(copy, staging)
                .then(
                  () => true,
                  (error: unknown) => {
                    readError ??= error;
                    abandoned = true;
                    return false;
                  },
                )
                .finally(stop);
            }),
        );
        input.board.offer(reads.slice(1));
        // This connection reads the first range, then any other no idle connection has taken meanwhile.
        let ownOk = true;
        for (const read of reads) if (read.claim()) ownOk = (await read.run(client)) && ownOk;
        mark(`${task.key}: read`);
        // The keys are read before the connection moves on; a failure is thrown once the loads have ended.
        let keysError: unknown;
        if (ownOk)
          await readKeys().catch((error: unknown) => {
            keysError = error;
            abandoned = true;
          });
        if (ownOk && keysError === undefined) sourceDone(true);
        const extracted = (await Promise.all(reads.map((r) => r.done))).every(Boolean);
        // Every load queued uses this table's DuckDB connection, closed when this function returns: none may still
        // be queued or running then (DuckDB crashes on a closed connection).
        const failedLoad = (await Promise.allSettled(loaded)).find(
          (r): r is PromiseRejectedResult => r.status === 'rejected',
        );
        if (!extracted) throw readError ?? new Error('a range of the table could not be read');
        if (keysError !== undefined) throw keysError;
        if (failedLoad) throw failedLoad.reason;
        input.reporter.phase(task, 'loading');
        if (parts === 0) {
          // An empty table still needs a part, so its columns are known.
          const empty = join(input.stagingDir, `${base}.empty.csv`);
          writeFileSync(empty, '');
          rows = await input.loads.enqueue(() => writer.copy(batchOf(empty, 0), 0));
        }
        return rows;
      },
      // Parquet stores an enum as its labels, a citext as its text: the catalog records the type as the column's tag.
      {
        notNull,
        memoryLimit: SYNC_MEMORY_LIMIT,
        // A compaction reads the table's rows as they are.
        ...(compacting ? { readsCurrent: true } : {}),
        columnTypes: Object.fromEntries(plans.filter((p) => isTaggedType(p.lakeType)).map((p) => [p.name, p.lakeType])),
        ...(task.cdcTag !== undefined
          ? {
              tags: {
                [CDC_TAG]: task.cdcTag,
                ...(task.cdcPartitions !== undefined ? { [PARTITIONS_TAG]: task.cdcPartitions } : {}),
              },
            }
          : {}),
        ...(layering
          ? {
              mergeOn: {
                key: lakeKey,
                ...(detecting ? { presentKeys: () => (keys as NonNullable<typeof keys>).sql } : {}),
                ...(detecting && task.softDeletes ? { softDelete: { column: DELETED_AT, at: input.syncedAt } } : {}),
                onMerged: (counts: MergeCounts) => void (deletedRows = counts.deleted),
                ...rereadOnly(incremental, newCursor, state?.cursorValue),
              },
            }
          : {}),
      },
    );
    if (keys?.stagedFile) {
      rmSync(keys.stagedFile, { force: true });
      input.staging.release(task.key, keys.stagedBytes);
    }
    input.reporter.phase(task, 'committed', {
      completed: committed.snapshot.rowCount,
      total: committed.snapshot.rowCount,
      ...(detecting ? { deleted: deletedRows } : {}),
    });
    return {
      task,
      rows: committed.snapshot.rowCount,
      transferred: merging ? transferred : committed.snapshot.rowCount,
      cursorValue: newCursor,
      columns: summary,
    };
  } catch (error) {
    removeStaged(input.stagingDir, base);
    input.staging.releaseTable(task.key);
    const message = failureReason(error, input);
    return failedTable(input.reporter, task, message, state, state?.columns ?? summary);
  }
}
