import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type * as mysql from 'mysql2';
import { endMysql, mysqlIdent, mysqlQuery, withMysql } from '../connectors/mysql.js';
import type { ConnectorSettings } from '../connectors/types.js';
import { quoteIdentifier, quoteLiteral } from '../engine/duckdb.js';
import { DELETED_AT, SYNCED_AT, lakeColumnNames } from '../sources/lake-names.js';
import { mergeableColumns, type MergeCounts } from '../storage/ducklake/merge.js';
import { isTaggedType } from '../storage/ducklake/types.js';
import { MAX_MERGES } from '../storage/lake.js';
import { compareColumns } from './pg-columns.js';
import { CDC_TAG } from './cdc/commit.js';
import { prepareBinlog } from './cdc/mysql-cdc.js';
import { compactionDeletes, compactionSql } from './compaction.js';
import { stageKeys } from './pg-keys.js';
import { csvLineOptions } from './pg-reads.js';
import { stagedName, type ColumnPlan } from './pg-types.js';
import { currentColumns } from './mysql-columns.js';
import { planMysqlColumn, recordSelect, type MysqlColumn } from './mysql-types.js';
import { MAX_SEGMENT_BYTES, removeStaged, ROWS_PER_SEGMENT, SegmentedStaging } from './segments.js';
import { stopAbandonedRead } from './mysql-abandoned-read.js';
import { recordStream } from './mysql-records.js';
import { keyRanges, prepareSession, startSnapshots, tableSizes } from './mysql-snapshot.js';
import { DEFAULT_SYNC_CONNECTIONS, MIN_RANGE_BYTES } from './table-ranges.js';
import { StagingBudget } from './staging-budget.js';
import { LoadQueue, MAX_WAITING_LOADS } from './load-queue.js';
import { failedTable, failureReason } from './table-failure.js';
import { rereadOnly } from './cursor-reread.js';
import { checkKeyColumns } from './key-columns.js';
import { mark } from '../../support/debug-timing.js';
import type { ExtractionContext, TableResult, TableTask } from './types.js';

const SYNC_MEMORY_LIMIT = '256MB';

export interface MysqlSyncInput extends ExtractionContext {
  settings: ConnectorSettings;
}

/**
 * Extracts every table of a MySQL or MariaDB source in one consistent snapshot, as `mysqldump --single-transaction`
 * does: one connection, REPEATABLE READ, `START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY`, the tables read one
 * after another (MySQL cannot hand a snapshot to another connection, so reading in parallel would not be one point
 * in time). Each row is made a CSV record by the server and streamed into staging files; DuckDB casts them exactly
 * into Parquet and the table is committed (merged on its primary key when incremental). A table that fails does not
 * undo the others.
 */
export async function syncMysql(input: MysqlSyncInput): Promise<TableResult[]> {
  mkdirSync(input.stagingDir, { recursive: true, mode: 0o700 });
  const staging = new StagingBudget(input.limits);
  const loads = new LoadQueue(MAX_WAITING_LOADS);
  return withMysql(input.settings, async (connection) => {
    const leader = watchConnection(connection, input);
    const { stop, stopped } = leader;
    let others: mysql.Connection[] = [];
    try {
      await prepareSession(connection, input.limits.idleTimeoutMs);
      // Where the binary log stands is read before the snapshot begins: the cdc tables it copies are as of then.
      const cdc = await prepareBinlog(
        connection,
        input,
        input.tasks.filter((t) => t.table.mode === 'cdc'),
      );
      const tasks = [...input.tasks.filter((t) => t.table.mode !== 'cdc'), ...cdc.copyTasks];
      // More connections in the same snapshot only when a table will be read in ranges over them: one read whole
      // (a table read from its cursor is read on the leader alone) with a single key and twice the smallest range.
      const allowed = Math.max(1, Number(input.settings.config.sync_connections ?? DEFAULT_SYNC_CONNECTIONS));
      const whole = tasks.filter(
        (t) => !(t.incremental && input.states.get(t.key)?.cursorValue != null) && t.table.primaryKey.length === 1,
      );
      const sizes =
        allowed > 1
          ? await tableSizes(
              connection,
              whole.map((t) => t.table),
            )
          : new Map<string, number>();
      const extra = [...sizes.values()].some((bytes) => bytes >= 2 * MIN_RANGE_BYTES) ? allowed - 1 : 0;
      mark('mysql: tables sized');
      others = await startSnapshots(
        input.settings,
        connection,
        tasks.map((t) => t.table),
        extra,
        (opened) => watchConnection(opened, input).stop,
        input.limits.idleTimeoutMs,
      );
      // The connection moves on to the next table once a table's rows are read; its last load and commit finish
      // meanwhile. The next table's loads wait for them (its rows are staged meanwhile), so one table at a time
      // loads: DuckDB's memory stays one write's.
      mark(`mysql: ${others.length + 1} snapshots started`);
      const finishing: Promise<TableResult>[] = [];
      for (const task of tasks) {
        if (input.signal.aborted) break;
        // At most the table before is still finishing: no more than two write instances are open at once.
        if (finishing.length >= 2) await finishing[finishing.length - 2];
        let sourceDone!: () => void;
        const sourceRead = new Promise<void>((resolve) => (sourceDone = resolve));
        const previous = finishing.at(-1) ?? Promise.resolve();
        const result = syncTable(connection, { others, sizes }, task, input, staging, leader, {
          sourceDone,
          loadsAfter: previous,
          loads,
        });
        finishing.push(result);
        await Promise.race([sourceRead, result]);
        // A connection closed by a bound ends the sync with that reason, and the tables after it with it.
        const reason = stopped();
        if (reason && !input.signal.aborted) {
          await Promise.allSettled(finishing);
          throw new Error(reason);
        }
      }
      // Every table is read: the other connections go while the last loads and commits finish. Each commits first,
      // so its snapshot's table locks are let go when the sync ends, not when the server gets round to the goodbye
      // (a DDL with NOWAIT right after a sync failed on them).
      const othersEnded = Promise.all(
        others.map((other) =>
          // A server that does not answer the COMMIT within a second is left as the goodbye leaves it.
          Promise.race([mysqlQuery(other, 'COMMIT'), new Promise((resolve) => setTimeout(resolve, 1000).unref())])
            .catch(() => undefined)
            .then(() => endMysql(other)),
        ),
      );
      others = [];
      const results = await allOrFirstFailure(finishing);
      await othersEnded;
      await mysqlQuery(connection, 'COMMIT');
      const copied = results.filter((r) => r.task.table.mode === 'cdc');
      return [
        ...results.filter((r) => r.task.table.mode !== 'cdc'),
        ...cdc.refused,
        ...(input.signal.aborted ? copied : await cdc.applyChanges(copied)),
      ];
    } catch (error) {
      // A statement outside any table's read (the session's settings, the binary log's position) cut by a bound.
      throw new Error(stopped() ?? (error as Error).message, { cause: error });
    } finally {
      stop();
      await Promise.all(others.map(endMysql));
    }
  });
}

/**
 * Bounds the connection as a PostgreSQL source's are: silent for the idle timeout, or running past the time bound,
 * or cancelled, it is closed, and whatever it was reading fails with that reason (`stopped`).
 */
function watchConnection(connection: mysql.Connection, input: MysqlSyncInput): ConnectionWatch {
  const socket = (connection as unknown as { stream: import('node:net').Socket }).stream;
  let reason: string | undefined;
  // Destroyed with an error, the driver fails the statement waiting for an answer (a plain destroy() never calls
  // it back, and the sync would wait for ever on a server that went silent).
  const close = (why: string) => () => {
    reason ??= why;
    socket.destroy(Object.assign(new Error(why), { code: 'PROTOCOL_CONNECTION_LOST' }));
  };
  const seconds = Math.round(input.limits.idleTimeoutMs / 1000);
  const silent = close(
    `the source sent nothing for ${seconds} s (LAKE_SYNC_IDLE_TIMEOUT_SECONDS); its connection was closed`,
  );
  socket.setTimeout(input.limits.idleTimeoutMs, () => {
    // Silent only while lake waits on it: not the leader while the last tables load and commit (lake asks it
    // nothing), nor a read lake paused while its loads catch up (recordStream pauses the socket; bytes the server
    // sent wait unread). The socket's timer starts again with the next traffic.
    const driver = connection as unknown as { _command: unknown; _commands: { length: number } };
    const waitedOn = driver._command != null || driver._commands.length > 0;
    if (waitedOn && !socket.isPaused() && socket.readableLength === 0) silent();
  });
  const bound = setTimeout(
    close('the sync ran past its time bound (LAKE_SYNC_TIMEOUT_SECONDS); its connection was closed'),
    input.limits.maxDurationMs,
  );
  bound.unref();
  const cancel = close('cancelled');
  input.signal.addEventListener('abort', cancel);
  return {
    stop: () => {
      clearTimeout(bound);
      socket.setTimeout(0);
      input.signal.removeEventListener('abort', cancel);
    },
    stopped: () => reason,
    close: (why) => close(why)(),
  };
}

/** A watched connection: `stopped` says why it was closed, if it was; `close` closes it with a reason. */
interface ConnectionWatch {
  stop: () => void;
  stopped: () => string | undefined;
  close: (why: string) => void;
}

/** For DECIMAL columns wider than 38 digits: the integer digits the rows read need (planMysqlColumn). */
async function wideDigits(
  connection: mysql.Connection,
  columns: readonly MysqlColumn[],
  from: string,
  where: { sql: string; values: unknown[] },
): Promise<Map<string, number>> {
  const wide = columns.filter((c) => c.dataType === 'decimal' && Number(/\((\d+),/.exec(c.columnType)?.[1] ?? 0) > 38);
  if (wide.length === 0) return new Map();
  const [row] = await mysqlQuery(
    connection,
    `SELECT ${wide.map((c) => `max(length(CAST(TRUNCATE(ABS(${mysqlIdent(c.name)}), 0) AS CHAR)))`).join(', ')} FROM ${from}${where.sql}`,
    where.values,
  );
  return new Map(wide.map((c, i) => [c.name, Number(row?.[i] ?? 1)]));
}

/** Every promise's value once all have settled, or the first failure then: none is left running behind a throw. */
async function allOrFirstFailure<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}

/**
 * Syncs one table: reads it over `connection`, then loads and commits it. `turn.sourceDone` is called as soon as
 * the table no longer needs the connection (read, or failed), so the next table's read can begin while this one's
 * last load and commit finish.
 */
async function syncTable(
  connection: mysql.Connection,
  /**
   * More connections in the same snapshot, which a large table's ranges are read over (startSnapshots), and the
   * tables' sizes that decide how many ranges (tableSizes).
   */
  { others, sizes }: { others: readonly mysql.Connection[]; sizes: ReadonlyMap<string, number> },
  task: TableTask,
  input: MysqlSyncInput,
  staging: StagingBudget,
  leader: ConnectionWatch,
  turn: {
    sourceDone: () => void;
    /** The table before it: this one's loads begin once that one has committed (or failed). */
    loadsAfter: Promise<unknown>;
    /** The sync's loads, one at a time in the order staged; reading waits for room in it. */
    loads: LoadQueue;
  },
): Promise<TableResult> {
  const { table } = task;
  const state = input.states.get(task.key);
  let summary = state?.columns ?? [];
  const base = `m_${createHash('sha256').update(task.key).digest('hex').slice(0, 20)}`;
  try {
    const columns = await currentColumns(connection, table);
    mark(`${task.key}: columns read`);
    if (columns.length === 0) throw new Error(`table ${task.key} no longer exists in the source`);
    summary = columns.map((c) => ({ name: c.name, type: c.columnType }));
    let incremental =
      task.incremental &&
      state?.cursorValue != null &&
      (state.lakeTable === undefined || state.lakeTable === task.lakeTable);
    if (state && (state.softDeletes ?? false) !== task.softDeletes) incremental = false;
    if (state) {
      const change = compareColumns(state.columns, summary);
      if (change.added.length + change.dropped.length + change.retyped.length > 0) {
        input.reporter.schemaChange(task, change);
        incremental = false;
      }
    }
    const cursor = table.cursorColumn;
    if (cursor && !columns.some((c) => c.name === cursor))
      throw new Error(
        `its cursor column ${cursor} is not a column of the table; choose another (PATCH the source's tables)`,
      );
    checkKeyColumns(
      table,
      columns.map((c) => c.name),
    );
    const from = `${mysqlIdent(table.schema)}.${mysqlIdent(table.name)}`;
    const lakeNames = lakeColumnNames(
      columns.map((c) => c.name),
      task.softDeletes,
    );
    const before = incremental
      ? await input.lake.tables.get(input.organizationId, task.lakeSchema, task.lakeTable)
      : undefined;
    const planFor = async (where: { sql: string; values: unknown[] }): Promise<ColumnPlan[]> => {
      const wide = await wideDigits(connection, columns, from, where);
      return columns.map((c, i) => ({ ...planMysqlColumn(c, wide), name: lakeNames[i] as string }));
    };
    const changedOnly = { sql: ` WHERE ${mysqlIdent(cursor ?? '')} >= ?`, values: [state?.cursorValue] };
    let where = incremental && cursor ? changedOnly : { sql: '', values: [] };
    let plans = await planFor(where);
    mark(`${task.key}: planned`);
    // Changed rows merge into the table as it is typed; a column they would type otherwise reads the table whole.
    const lakeType = new Map((before?.snapshot.columns ?? []).map((c) => [c.name, c.type]));
    if (before && plans.some((p) => lakeType.has(p.name) && lakeType.get(p.name) !== p.lakeType)) {
      incremental = false;
      where = { sql: '', values: [] };
      plans = await planFor(where);
    }
    const newCursor = cursor
      ? ((await mysqlQuery(connection, `SELECT CAST(max(${mysqlIdent(cursor)}) AS CHAR) FROM ${from}`))[0]?.[0] ?? null)
      : null;
    mark(`${task.key}: cursor read`);
    const lakeKey = table.primaryKey.map((k) => lakeNames[columns.findIndex((c) => c.name === k)] ?? k);
    const previous = incremental ? before : undefined;
    const merging = previous !== undefined && lakeKey.length > 0;
    const layering = merging && previous.snapshot.layers - 1 < MAX_MERGES && mergeableColumns(plans.map((p) => p.name));
    const compacting = merging && !layering;
    // Delete detection: the source's keys, read in the same snapshot once the changed rows are; a lake row whose key
    // is not among them is deleted (a full refresh needs none: it is the source).
    const detecting = merging && task.table.detectDeletes === true;
    let keys: Awaited<ReturnType<typeof stageKeys>> | undefined;
    let deletedRows = 0;
    input.reporter.phase(task, 'extracting', { completed: 0, total: incremental ? null : table.estimatedRows });
    /** Staged segments; `bytes` count against the staging caps until the segment is loaded and removed. */
    const segments: { file: string; longest: number; bytes: number }[] = [];
    let transferred = 0;
    const reader = (file: string, longest: number): string =>
      `read_csv(${quoteLiteral(file)}, columns = {${plans.map((p, i) => `'c${i}': '${p.csvType}'`).join(', ')}}, header = false, auto_detect = false, quote = '"', escape = '"', allow_quoted_nulls = false, delim = ',', ${csvLineOptions(longest)})`;
    const batchOf = (file: string, longest: number): string =>
      `SELECT ${plans.map((p, i) => `${p.load(stagedName(i))} AS ${quoteIdentifier(p.name)}`).join(', ')}, TIMESTAMPTZ ${quoteLiteral(input.syncedAt)} AS ${SYNCED_AT}${task.softDeletes ? `, NULL::TIMESTAMPTZ AS ${DELETED_AT}` : ''} FROM ${reader(file, longest)}`;
    /**
     * Streams the rows into staging segments; each finished segment is loaded as a part while the next arrives (a
     * compaction reads its batch twice: it is staged whole, as one segment, and loaded after). Every load has ended
     * when this returns, whatever failed.
     */
    const stageAndLoad = async (load: (file: string, longest: number, index: number) => Promise<number>) => {
      let rows = 0;
      let closedUnderRead: string | undefined;
      const previousDone = turn.loadsAfter.then(
        () => undefined,
        () => undefined,
      );
      const loads: Promise<void>[] = [];
      let loadError: unknown;
      const onSegment = async (file: string, longest: number, bytes: number): Promise<void> => {
        segments.push({ file, longest, bytes });
        if (compacting) return;
        const index = segments.length - 1;
        loads.push(
          turn.loads.enqueue(async () => {
            await previousDone;
            if (loadError !== undefined) return;
            try {
              rows += await load(file, longest, index);
              // Given back as soon as it is loaded, as a PostgreSQL sync does: the caps bound what is staged at
              // once, not the table (counted until the table ended, a table's staged bytes in all passed the cap).
              rmSync(file, { force: true });
              staging.release(task.key, bytes);
              (segments[index] as { bytes: number }).bytes = 0;
            } catch (error) {
              loadError = error;
            }
          }),
        );
        // Reading waits while the sync's loads lag, as a PostgreSQL sync's does: staged without waiting, a table
        // read faster than DuckDB loads it (or while the table before still commits) was staged almost whole.
        await turn.loads.room();
      };
      // A large table read whole is read in ranges of its key over every connection at once (keyRanges).
      let ranges = [''];
      let readCounts = [0];
      const record = recordSelect(plans);
      const readRange = async (on: mysql.Connection, range: string, i: number): Promise<void> => {
        // The leader is watched for the whole sync; another connection only while it reads (it idles between).
        const watch = on === connection ? undefined : watchConnection(on, input);
        const records = recordStream(
          on,
          `SELECT ${record.sql} FROM ${from}${where.sql}${range ? `${where.sql ? ' AND' : ' WHERE'} ${range}` : ''}`,
          where.values,
          record.quoted,
        );
        try {
          await pipeline(
            records,
            new SegmentedStaging(
              input.stagingDir,
              ranges.length > 1 ? `${base}.r${i}` : base,
              compacting ? Number.POSITIVE_INFINITY : (input.segmentRows ?? ROWS_PER_SEGMENT),
              onSegment,
              (n) => {
                readCounts[i] = n;
                transferred = readCounts.reduce((a, b) => a + b, 0);
                input.reporter.rows(task, transferred);
              },
              {
                budget: staging,
                table: task.key,
                maxSegmentBytes: compacting ? Number.POSITIVE_INFINITY : MAX_SEGMENT_BYTES,
              },
              { framed: true },
            ),
          );
        } catch (error) {
          await stopAbandonedRead(records, on, input.settings, (watch ?? leader).close);
          throw error;
        } finally {
          closedUnderRead ??= watch?.stopped();
          watch?.stop();
        }
      };
      try {
        if (!incremental && !compacting && others.length > 0) {
          const keyType = columns.find((c) => c.name === table.primaryKey[0])?.dataType;
          ranges = await keyRanges(connection, table, keyType, 1 + others.length, sizes.get(task.key) ?? 0);
          readCounts = ranges.map(() => 0);
        }
        const reads = await Promise.allSettled(
          ranges.map((range, i) => readRange(i === 0 ? connection : (others[i - 1] as mysql.Connection), range, i)),
        );
        const failed = reads.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
        // The source's keys, read in the same snapshot while the last parts load.
        if (detecting && loadError === undefined) {
          const keyPlans = lakeKey.map((k) => plans.find((p) => p.name === k) as ColumnPlan);
          const keyRecord = recordSelect(keyPlans);
          const keyRecords = recordStream(connection, `SELECT ${keyRecord.sql} FROM ${from}`, [], keyRecord.quoted);
          keys = await stageKeys({
            keyPlans,
            records: keyRecords,
            framed: true,
            stagingDir: input.stagingDir,
            base,
            bounds: { budget: staging, table: task.key, maxSegmentBytes: Number.POSITIVE_INFINITY },
          }).catch(async (error: unknown) => {
            await stopAbandonedRead(keyRecords, connection, input.settings, leader.close);
            throw error;
          });
        }
      } finally {
        // A connection closed under the read (a bound, a cancel) may end its rows as if they were all: looked at
        // before the next table may use the connection, and never committed.
        closedUnderRead ??= leader.stopped();
        turn.sourceDone();
        // A compaction's load, and an empty table's, also come after the table before has committed.
        await Promise.all([previousDone, ...loads]);
      }
      if (loadError !== undefined) throw loadError;
      if (closedUnderRead) throw new Error(closedUnderRead);
      input.reporter.phase(task, 'loading');
      if (segments.length === 0) {
        const empty = join(input.stagingDir, `${base}.empty.csv`);
        writeFileSync(empty, '', { mode: 0o600 });
        segments.push({ file: empty, longest: 0, bytes: 0 });
        if (!compacting) rows += await load(empty, 0, 0);
      }
      return rows;
    };
    const notNull = new Set([...columns.flatMap((c, i) => (c.notNull ? [lakeNames[i] as string] : [])), SYNCED_AT]);
    let committedRows = 0;
    try {
      const committed = await input.lake.writeSnapshot(
        input.organizationId,
        task.lakeSchema,
        task.lakeTable,
        async (writer) => {
          // The write's DuckDB instance opens while the rows are read (writeSnapshot starts it).
          const rows = await stageAndLoad((file, longest, index) => writer.copy(batchOf(file, longest), index));
          if (!compacting) return rows;
          // Merged whole: the table's rows whose key changed give way to the changed rows, as one new version.
          const batch = segments[0] as { file: string; longest: number };
          const compaction = compactionSql({
            current: input.lake.rowsSql(previous as NonNullable<typeof previous>),
            batch: batchOf(batch.file, batch.longest),
            key: lakeKey,
            ...(keys ? { keysSql: keys.sql } : {}),
            softDeletes: task.softDeletes,
            syncedAt: input.syncedAt,
          });
          deletedRows = await compactionDeletes(await writer.connection(), compaction);
          return writer.copy(compaction.rows, 0);
        },
        {
          notNull,
          memoryLimit: SYNC_MEMORY_LIMIT,
          // Its loads wait for the table before's commit anyway: its instance is then free to be taken, warm.
          openAfter: turn.loadsAfter,
          ...(task.cdcTag !== undefined ? { tags: { [CDC_TAG]: task.cdcTag } } : {}),
          ...(compacting ? { readsCurrent: true } : {}),
          // An enum is kept as its labels and a collated text as its text: the catalog records the type as a tag.
          columnTypes: Object.fromEntries(
            plans.filter((p) => isTaggedType(p.lakeType)).map((p) => [p.name, p.lakeType]),
          ),
          ...(layering
            ? {
                mergeOn: {
                  key: lakeKey,
                  ...(detecting ? { presentKeys: () => (keys as NonNullable<typeof keys>).sql } : {}),
                  ...(detecting && task.softDeletes ? { softDelete: { column: DELETED_AT, at: input.syncedAt } } : {}),
                  onMerged: (counts: MergeCounts) => void (deletedRows = counts.deleted),
                  ...rereadOnly(incremental, newCursor === null ? null : String(newCursor), state?.cursorValue),
                },
              }
            : {}),
        },
      );
      committedRows = committed.snapshot.rowCount;
    } finally {
      if (keys?.stagedFile) {
        rmSync(keys.stagedFile, { force: true });
        staging.release(task.key, keys.stagedBytes);
      }
      for (const segment of segments) {
        rmSync(segment.file, { force: true });
        staging.release(task.key, segment.bytes);
      }
    }
    input.reporter.phase(task, 'committed', {
      completed: committedRows,
      total: committedRows,
      ...(detecting ? { deleted: deletedRows } : {}),
    });
    return {
      task,
      rows: committedRows,
      transferred: merging ? transferred : committedRows,
      cursorValue: newCursor === null ? null : String(newCursor),
      columns: summary,
    };
  } catch (error) {
    removeStaged(input.stagingDir, base);
    staging.releaseTable(task.key);
    // A bound that closed the connection is the reason, unless the sync was cancelled.
    const message = (input.signal.aborted ? undefined : leader.stopped()) ?? failureReason(error, input);
    return failedTable(input.reporter, task, message, state, state?.columns ?? summary);
  }
}
