import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import type { to as CopyTo } from 'pg-copy-streams';
import { requireCommonJs } from '../../support/load-commonjs.js';
import { classifyPostgresFailure, connectPostgres, postgresClient } from '../connectors/postgres.js';
import type { ConnectorSettings } from '../connectors/types.js';
import { quoteIdentifier, quoteLiteral } from '../engine/duckdb.js';
import { MAX_LAYERS, type Lake } from '../storage/lake.js';
import { layersOf, snapshotSource } from '../storage/snapshot-sql.js';
import { planColumn, stagedName, type ColumnPlan, type NumericShape, type SourceFacts } from './pg-types.js';
import { LoadQueue } from './load-queue.js';
import { SegmentedStaging } from './segments.js';
import type { SyncSettings } from './settings.js';
import { requestCancel, TenantConnections } from '../connectors/tenant-connections.js';
import { StagingBudget } from './staging-budget.js';
import { LakeServiceError } from '../core/errors.js';
import { lakeColumnNames, SYNCED_AT } from '../sources/lake-names.js';
import { RangeBoard, RangeRead, rangeConditions } from './table-ranges.js';
import type { SyncReporter, TableResult, TableState, TableTask } from './types.js';

const pgIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** DuckDB's memory while loading one table; with insertion order off, large tables stream through it. */
const SYNC_MEMORY_LIMIT = '256MB';

/** Records per staged segment: large enough for DuckDB's parallel reader, small enough to overlap the COPY. */
const ROWS_PER_SEGMENT = 500_000;

/** A segment is also cut at this size, so wide rows make several files rather than one huge one. */
const MAX_SEGMENT_BYTES = 256 << 20;

/** Whether `query` is the statement `client` is running (node-postgres keeps it as activeQuery until it ends). */
const isActiveQuery = (client: pg.Client, query: unknown): boolean =>
  (client as unknown as { activeQuery: unknown }).activeQuery === query;

/** Segments staged and not yet loaded, at most, across a sync's connections: bounds the staging disk. */
const MAX_WAITING_LOADS = 4;
const pgLiteral = (text: string): string => `'${text.replace(/'/g, "''")}'`;

interface SourceColumn {
  name: string;
  type: string;
  /** An enum's labels in their declared order; undefined for other types. */
  enumLabels: string[] | undefined;
  notNull: boolean;
}

async function currentColumns(client: pg.Client, schema: string, table: string): Promise<SourceColumn[]> {
  const result = await client.query<{ name: string; type: string; enum_labels: string[] | null; not_null: boolean }>(
    // A domain travels as its base type (its checks were the source's business), so it keeps that type's semantics.
    `SELECT a.attname AS name,
            CASE WHEN t.typtype = 'd' THEN format_type(t.typbasetype, t.typtypmod) ELSE format_type(a.atttypid, a.atttypmod) END AS type,
            CASE WHEN coalesce(b.typtype, t.typtype) = 'e'
                 THEN (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = coalesce(b.oid, t.oid)) END AS enum_labels,
            a.attnotnull AS not_null
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_type t ON t.oid = a.atttypid
     LEFT JOIN pg_type b ON t.typtype = 'd' AND b.oid = t.typbasetype
     WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [schema, table],
  );
  return result.rows.map((r) => ({
    name: r.name,
    type: r.type,
    enumLabels: r.enum_labels ?? undefined,
    notNull: r.not_null,
  }));
}

/**
 * For numeric columns without a declared precision: the largest scale and integer digits of the rows this sync
 * reads (the same WHERE), and whether any is NaN or infinite. It costs one more scan of the table at the source,
 * and lets such columns be exact DECIMALs (they compare and sum as numbers) wherever their values fit 38 digits.
 */
async function numericShapes(
  client: pg.Client,
  columns: readonly SourceColumn[],
  from: string,
  where: string,
): Promise<Map<string, NumericShape>> {
  const free = columns.filter((c) => c.type === 'numeric');
  const shapes = new Map<string, NumericShape>();
  if (free.length === 0) return shapes;
  const special = (col: string): string => `${col}::text IN ('NaN', 'Infinity', '-Infinity')`;
  const parts = free.flatMap((c, i) => {
    const col = pgIdent(c.name);
    return [
      `max(scale(${col})) FILTER (WHERE NOT ${special(col)}) AS s${i}`,
      `max(length(trunc(abs(${col}))::text)) FILTER (WHERE NOT ${special(col)}) AS d${i}`,
      `count(*) FILTER (WHERE ${special(col)}) AS x${i}`,
    ];
  });
  const row =
    (await client.query<Record<string, string | number | null>>(`SELECT ${parts.join(', ')} FROM ${from}${where}`))
      .rows[0] ?? {};
  free.forEach((c, i) =>
    shapes.set(c.name, {
      scale: Number(row[`s${i}`] ?? 0),
      integerDigits: Number(row[`d${i}`] ?? 1),
      special: Number(row[`x${i}`] ?? 0) > 0,
    }),
  );
  return shapes;
}

function compareColumns(
  before: TableState['columns'],
  now: readonly SourceColumn[],
): { added: string[]; dropped: string[]; retyped: string[] } {
  const old = new Map(before.map((c) => [c.name, c.type]));
  const current = new Map(now.map((c) => [c.name, c.type]));
  return {
    added: [...current.keys()].filter((n) => !old.has(n)),
    dropped: [...old.keys()].filter((n) => !current.has(n)),
    retyped: [...current].filter(([n, t]) => old.has(n) && old.get(n) !== t).map(([n]) => n),
  };
}

export interface PostgresSyncInput {
  settings: ConnectorSettings;
  tasks: readonly TableTask[];
  states: ReadonlyMap<string, TableState>;
  lake: Lake;
  organizationId: string;
  stagingDir: string;
  syncedAt: string;
  reporter: SyncReporter;
  signal: AbortSignal;
  /** Idle and time bounds on the source, and the staging caps. */
  limits: SyncSettings;
}

/**
 * Connections a sync reads over when a source does not say (`sync_connections`): a core for each beyond the first,
 * at least two and at most three. Since a large table is read in ranges over them, two beat one by 12% on two cores
 * for 25 MB more memory, and a third bought nothing there (bench/sync-tables.mjs, docs/performance.md).
 */
export const DEFAULT_SYNC_CONNECTIONS = Math.min(3, Math.max(2, availableParallelism() - 1));

async function openSession(settings: ConnectorSettings, connections: TenantConnections): Promise<pg.Client> {
  const client = postgresClient(settings, 'sync');
  client.on('error', () => {});
  connections.add(client);
  await connectPostgres(client, settings);
  await client.query(
    "SET TimeZone = 'UTC'; SET DateStyle = 'ISO'; SET IntervalStyle = 'iso_8601'; SET extra_float_digits = 1",
  );
  // PostgreSQL 14 and later notice a client that has gone while a statement runs (a lock wait, a long scan)
  // instead of only at its next write; older servers do not know the setting, which changes nothing else.
  await client.query("SET client_connection_check_interval = '2s'").catch(() => undefined);
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
  return client;
}

/** The leader's snapshot, for other connections to import; undefined where the server will not export one. */
async function exportSnapshot(client: pg.Client): Promise<string | undefined> {
  try {
    // Not in a savepoint: PostgreSQL exports no snapshot from a subtransaction.
    return (await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id')).rows[0]?.id;
  } catch {
    // Nothing was read yet: the aborted transaction is replaced by a fresh one.
    await client.query('ROLLBACK');
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    return undefined;
  }
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
  const { to } = requireCommonJs('pg-copy-streams') as { to: typeof CopyTo };
  const allowed = Math.max(1, Number(input.settings.config.sync_connections ?? DEFAULT_SYNC_CONNECTIONS));
  const clients: pg.Client[] = [];
  const connections = new TenantConnections(input.limits, input.signal);
  try {
    clients.push(await openSession(input.settings, connections));
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
    // Where a snapshot cannot be exported (or a helper cannot join it: the server's connection limit, say), the
    // sync reads over fewer connections; never over one that would see another point in time.
    const snapshot = wanted > 1 ? await exportSnapshot(leader) : undefined;
    for (let i = 1; snapshot !== undefined && i < wanted; i++) {
      // A helper connection that cannot open (the server's connection limit) only means fewer connections.
      const helper = await openSession(input.settings, connections).catch(() => undefined);
      if (!helper) break;
      try {
        await helper.query(`SET TRANSACTION SNAPSHOT ${pgLiteral(snapshot)}`);
        clients.push(helper);
      } catch {
        // Already failing to join the snapshot: its end is best effort (the sync's close destroys it anyway).
        await helper.end().catch(() => {});
        break;
      }
    }
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
    // Loads still running use DuckDB connections of their own: every one ends before the sync does.
    await Promise.allSettled(finishing);
    if (!connections.ended) await Promise.all(clients.map((client) => client.query('COMMIT')));
  } finally {
    await connections.close();
  }
  // A cancel ends the sync as cancelled; an idle source or the time bound fails it with that reason, and with the
  // reasons of tables that had failed before (a table's own failure can be what left its connection idle).
  const stopped = input.signal.aborted ? undefined : (connections.failure ?? connectionError);
  if (stopped !== undefined) {
    const failedTables = results.filter((r) => r?.error).map((r) => `${r.task.key} (${r.error})`);
    const reason = stopped instanceof Error ? stopped.message : String(stopped);
    throw new Error(
      failedTables.length > 0 ? `${reason}; before that, table ${failedTables.join('; table ')}` : reason,
    );
  }
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
  try {
    const columns = await currentColumns(client, table.schema, table.name);
    summary = columns.map((c) => ({ name: c.name, type: c.type }));
    if (columns.length === 0) throw new Error(`table ${task.key} no longer exists in the source`);
    // A table that moved to another lake table (lakeTableNames) is read whole into it: the increment alone would
    // be all the new table held.
    let incremental =
      task.incremental &&
      state !== undefined &&
      state.cursorValue !== null &&
      (state.lakeTable === undefined || state.lakeTable === task.lakeTable);
    if (state) {
      const change = compareColumns(state.columns, columns);
      if (change.added.length + change.dropped.length + change.retyped.length > 0) {
        input.reporter.schemaChange(task, change);
        // New columns would be missing from earlier rows: this run replaces the table whole.
        incremental = false;
      }
    }
    const cursor = task.table.cursorColumn;
    const cursorType = columns.find((c) => c.name === cursor)?.type;
    if (cursor && cursorType === undefined)
      throw new Error(
        `its cursor column ${cursor} is not a column of the table; choose another (PATCH the source's tables)`,
      );
    const where =
      incremental && cursor && state?.cursorValue
        ? ` WHERE ${pgIdent(cursor)} >= ${pgLiteral(state.cursorValue)}::${cursorType}`
        : '';
    const from = `${pgIdent(table.schema)}.${pgIdent(table.name)}`;
    const facts: SourceFacts = {
      moneyScale,
      numericShapes: await numericShapes(client, columns, from, where),
    };
    // Columns keep the source's names in the lake, made unique case-insensitively and never lake's own _synced_at
    // (lakeColumnNames); the source's name is what the COPY selects.
    const lakeNames = lakeColumnNames(columns.map((c) => c.name));
    const lakeName = new Map(columns.map((c, i) => [c.name, lakeNames[i] as string]));
    const plans: ColumnPlan[] = columns.map((c, i) => ({
      ...planColumn(c.name, c.type, c.enumLabels, facts),
      name: lakeNames[i] as string,
    }));
    const lakeKey = table.primaryKey.map((k) => lakeName.get(k) ?? k);
    const newCursor = cursor
      ? ((await client.query<{ max: string | null }>(`SELECT max(${pgIdent(cursor)})::text AS max FROM ${from}`))
          .rows[0]?.max ?? null)
      : null;
    const total = incremental ? null : table.estimatedRows;
    input.reporter.phase(task, 'extracting', { completed: 0, total });
    const notNull = new Set([
      ...columns.filter((c) => c.notNull).map((c) => lakeName.get(c.name) as string),
      SYNCED_AT,
    ]);
    const previous = incremental
      ? await input.lake.tables.get(input.organizationId, task.lakeSchema, task.lakeTable)
      : undefined;
    const merging = previous !== undefined && lakeKey.length > 0;
    // Changed rows become a new layer on the previous snapshot (the cost follows the change); a snapshot with
    // MAX_LAYERS layers, or layered on another key, is compacted instead: merged whole into one new snapshot.
    const sameKey =
      previous?.snapshot.mergeKey === undefined ||
      JSON.stringify(previous.snapshot.mergeKey) === JSON.stringify(lakeKey);
    const layering = merging && sameKey && layersOf(previous.snapshot).length < MAX_LAYERS;
    const compacting = merging && !layering;
    // Staging files are named by a digest of the table: a source's names may be long, differ only in case, or
    // hold characters no file name may.
    const base = `t_${createHash('sha256').update(task.key).digest('hex').slice(0, 20)}`;
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
      `SELECT ${plans.map((p, i) => `${p.load(stagedName(i))} AS ${quoteIdentifier(p.name)}`).join(', ')}, TIMESTAMPTZ ${quoteLiteral(input.syncedAt)} AS ${SYNCED_AT} FROM ${reader(file, longestRecord)}`;
    // zstd level 1: faster to write than DuckDB's default level and, measured on lineitem-like data, no larger.
    // Format version 2 (data page v2, delta and byte-stream-split encodings): a quarter less CPU to write and a
    // fifth smaller on the bench's tables; every reader of lake's parts is DuckDB, and Arrow and Spark read it too.
    // Row groups of at most 16 MB (20–80 thousand lineitem rows): DuckDB holds a row group per thread in memory
    // while writing it, outside its memory limit, and at its default (122,880 rows) a load of 500,000 rows peaked at
    // 330 MB instead of 250 MB.
    const toParquet = async (
      connection: import('@duckdb/node-api').DuckDBConnection,
      source: string,
      target: string,
    ): Promise<number> =>
      Number(
        (
          await connection.run(
            `COPY (${source}) TO ${quoteLiteral(target)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, PARQUET_VERSION v2, ROW_GROUP_SIZE_BYTES '16MB')`,
          )
        ).rowsChanged,
      );

    const committed = await input.lake.writeSnapshot(
      input.organizationId,
      task.lakeSchema,
      task.lakeTable,
      async (connection, part) => {
        // Every COPY is started only once DuckDB is ready: a COPY that nobody reads would hold its connection for ever.
        const startCopy = (on: pg.Client, sql: string): { copy: ReturnType<typeof to>; stop: () => void } => {
          const copy = on.query(to(sql));
          const abort = (): void => void copy.destroy(new Error('cancelled'));
          if (input.signal.aborted) abort();
          input.signal.addEventListener('abort', abort, { once: true });
          // A COPY given up part-way (a staging cap, a failed write) is still being sent by the server, and the
          // connection answers nothing else until it ends: the server is asked to stop it, so the table's savepoint
          // can be rolled back and the connection read the next table.
          copy.on('close', () => {
            if (!copy.readableEnded && isActiveQuery(on, copy)) requestCancel(on);
          });
          return { copy, stop: () => input.signal.removeEventListener('abort', abort) };
        };
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
          sourceDone(true);
          input.reporter.phase(task, 'loading');
          const current = snapshotSource((previous as NonNullable<typeof previous>).snapshot, (f) =>
            input.lake.layout.toAbsolute(f),
          );
          const match = lakeKey
            .map((k) => `b.${quoteIdentifier(k)} IS NOT DISTINCT FROM p.${quoteIdentifier(k)}`)
            .join(' AND ');
          return input.loads.enqueue(() =>
            toParquet(
              connection,
              `WITH b AS (${batchOf(staged.file, staged.longest)}) SELECT p.* FROM (${current}) p WHERE NOT EXISTS (SELECT 1 FROM b WHERE ${match}) UNION ALL BY NAME SELECT * FROM b`,
              part(0),
            ),
          );
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
              rows += await toParquet(connection, batchOf(segment, longest), part(index));
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
                ROWS_PER_SEGMENT,
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
        if (ownOk) sourceDone(true);
        const extracted = (await Promise.all(reads.map((r) => r.done))).every(Boolean);
        // Every load queued uses this table's DuckDB connection, closed when this function returns: none may still
        // be queued or running then (DuckDB crashes on a closed connection).
        const failedLoad = (await Promise.allSettled(loaded)).find(
          (r): r is PromiseRejectedResult => r.status === 'rejected',
        );
        if (!extracted) throw readError ?? new Error('a range of the table could not be read');
        if (failedLoad) throw failedLoad.reason;
        input.reporter.phase(task, 'loading');
        if (parts === 0) {
          // An empty table still needs a part, so its columns are known.
          const empty = join(input.stagingDir, `${base}.empty.csv`);
          writeFileSync(empty, '');
          rows = await input.loads.enqueue(() => toParquet(connection, batchOf(empty, 0), part(0)));
        }
        return rows;
      },
      // Parquet stores an enum as its label: the snapshot records the enum type, and the catalog view restores it.
      {
        notNull,
        memoryLimit: SYNC_MEMORY_LIMIT,
        columnTypes: Object.fromEntries(
          plans.filter((p) => p.lakeType.startsWith('ENUM(')).map((p) => [p.name, p.lakeType]),
        ),
        ...(layering ? { layerOn: { previous: previous as NonNullable<typeof previous>, key: lakeKey } } : {}),
      },
    );
    input.reporter.phase(task, 'committed', {
      completed: committed.snapshot.rowCount,
      total: committed.snapshot.rowCount,
    });
    return {
      task,
      rows: committed.snapshot.rowCount,
      transferred: merging ? transferred : committed.snapshot.rowCount,
      cursorValue: newCursor,
      columns: summary,
    };
  } catch (error) {
    // Nor a path of this server (a staging or lake file named in a reader's or the file system's error).
    const message = input.signal.aborted
      ? 'cancelled'
      : withoutConnectionDetails(error instanceof Error ? error.message : String(error), input.settings)
          .split(input.lake.layout.homeRoot)
          .join('<lake>');
    input.reporter.phase(task, 'failed', { error: message });
    return {
      task,
      rows: 0,
      transferred: 0,
      cursorValue: state?.cursorValue ?? null,
      columns: state?.columns ?? summary,
      error: message,
    };
  }
}

interface RelationSize {
  kind: string | null;
  bytes: string | null;
  block_size: number;
}

const sizeOf = (row: RelationSize | undefined, connections: number): string[] =>
  row && (row.kind === 'r' || row.kind === 'm')
    ? rangeConditions(Number(row.bytes), row.block_size, connections)
    : [''];

/** How many reads (a table, or each range of a large one) a sync has before it, as its tables stand at the start. */
async function readsExpected(client: pg.Client, tasks: readonly TableTask[], rangesPerTable: number): Promise<number> {
  if (rangesPerTable === 1) return tasks.length;
  const sizes = await client.query<RelationSize>(
    `SELECT c.relkind AS kind, pg_relation_size(c.oid) AS bytes, current_setting('block_size')::int AS block_size
     FROM unnest($1::text[], $2::text[]) AS t(schema_name, table_name)
     LEFT JOIN pg_namespace n ON n.nspname = t.schema_name LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.table_name`,
    [tasks.map((t) => t.table.schema), tasks.map((t) => t.table.name)],
  );
  return sizes.rows.reduce((sum, row, i) => sum + (tasks[i]?.incremental ? 1 : sizeOf(row, rangesPerTable).length), 0);
}

/** DuckDB's CSV reader refuses a record longer than its max_line_size, 2 MB unless told. */
const DEFAULT_MAX_LINE_BYTES = 2 << 20;

/**
 * The reader's line and buffer sizes for a staged file whose longest record is known (a text or JSON value of
 * several MB is a valid row). The buffer is 4 MB, not DuckDB's 32 MB per thread, unless a record needs more.
 */
function csvLineOptions(longestRecord: number): string {
  const maxLine = Math.max(DEFAULT_MAX_LINE_BYTES, longestRecord + 1024);
  return `max_line_size = ${maxLine}, buffer_size = ${Math.max(4 << 20, 2 * maxLine)}`;
}

/** Block ranges of a table to read side by side (see rangeConditions); none for what is not a plain table. */
async function tableRanges(client: pg.Client, schema: string, table: string, connections: number): Promise<string[]> {
  const row = (
    await client.query<RelationSize>(
      `SELECT c.relkind AS kind, pg_relation_size(c.oid) AS bytes, current_setting('block_size')::int AS block_size
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
      [schema, table],
    )
  ).rows[0];
  const conditions = sizeOf(row, connections);
  return conditions.length > 1 ? conditions : [];
}

/**
 * PostgreSQL's message for a table that failed, without the source's host, port, user or database: those are
 * secrets of the source, and the message reaches the sync object, its stream and the CLI.
 */
export function withoutConnectionDetails(message: string, settings: ConnectorSettings): string {
  const named: [unknown, string][] = [
    [settings.secrets.password, '<password>'],
    [settings.secrets.host ?? settings.config.host, '<host>'],
    [settings.secrets.user ?? settings.config.user, '<user>'],
    [settings.config.database, '<database>'],
  ];
  let clean = message;
  for (const [value, placeholder] of named) {
    if (typeof value === 'string' && value.length >= 2) clean = clean.split(value).join(placeholder);
  }
  return concise(clean);
}

/** Longest table failure reason kept: it travels in the sync object, every stream's last event and the logs. */
const MAX_REASON_CHARS = 1000;

/**
 * A DuckDB reader error quotes the whole offending row (megabytes, and the source's data in the sync object) and
 * lists its options with the staging file's path on this server: the reason keeps the rest.
 */
function concise(message: string): string {
  const kept = message
    .split('\n')
    .filter((line) => !line.startsWith('Original Line:') && !/^\s+[\w ]+ = /.test(line))
    .join('\n')
    .trim();
  return kept.length > MAX_REASON_CHARS ? `${kept.slice(0, MAX_REASON_CHARS)}…` : kept;
}
