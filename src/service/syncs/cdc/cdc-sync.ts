import { createHash } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import type pg from 'pg';
import type { from as CopyFrom, to as CopyTo } from 'pg-copy-streams';
import { pgDriver } from '../../../support/source-drivers.js';
import { TenantConnections } from '../../connectors/tenant-connections.js';
import { CdcRefusal, type ConnectorSettings } from '../../connectors/types.js';
import type { MergeCounts } from '../../storage/ducklake/merge.js';
import { compareColumns, currentColumns } from '../pg-columns.js';
import { openSession } from '../pg-session.js';
import { StagingBudget } from '../staging-budget.js';
import { failedTable, failureReason } from '../table-failure.js';
import { keyColumnsProblem } from '../key-columns.js';
import type { ExtractionContext, TableResult, TableTask } from '../types.js';
import { convertChanges } from './apply.js';
import { CDC_TAG, PARTITIONS_TAG, commitChanges } from './commit.js';
import { needsResnapshot } from './columns.js';
import { changesFile, stageChanges, type StagedChanges } from './changes.js';
import { parseLsn } from './pgoutput.js';
import { partitionsNow } from './partitions.js';
import {
  advanceSlot,
  cdcName,
  checkCdcReady,
  createSlot,
  dropCdc,
  ensurePublication,
  slotState,
  type SlotState,
} from '../../connectors/postgres-slot.js';

export { CDC_TAG, PARTITIONS_TAG } from './commit.js';

/** A slot's exported snapshot, for the sync's readers to import; `shared` once every reader has. */
export interface CdcSnapshot {
  name: string;
  shared(): Promise<void>;
}

export interface CdcInput extends Omit<ExtractionContext, 'tasks'> {
  settings: ConnectorSettings;
  sourceId: string;
  /** The source had a slot at its last sync (SourceRecord.cdcSlot): with no cdc table left, it is dropped. */
  hadSlot: boolean;
  /**
   * Every enabled cdc table of the source (`schema.table`), synced now or not: the publication lists them all, so a
   * sync of some tables (`tables` in its request) does not drop the others' changes from the stream.
   */
  cdcTables: readonly { schema: string; name: string }[];
  /** Told what the source reports of the slot after the sync moved it (null: dropped). */
  onSlot: (slot: SlotReport | null) => Promise<void>;
}

/** The slot as a sync leaves it. */
export interface SlotReport extends SlotState {
  name: string;
}

/** What a sync does for its cdc tables: copies some whole (in `snapshot`), then applies changes to all of them. */
export interface CdcRun {
  snapshot: CdcSnapshot | undefined;
  /** The cdc tables the sync reads whole (new, changed columns, a new slot), each with the position it is as of. */
  copyTasks: TableTask[];
  /** The cdc tables the source cannot serve (no logical WAL, no rights), failed with what to do. */
  refused: TableResult[];
  /** After the copies: every cdc table's changes since its position, one commit each; then the slot moves on. */
  applyChanges(copied: readonly TableResult[], signal: AbortSignal): Promise<TableResult[]>;
  close(): Promise<void>;
}

const NO_CDC: CdcRun = {
  snapshot: undefined,
  copyTasks: [],
  refused: [],
  applyChanges: async () => [],
  close: async () => undefined,
};

/**
 * Opens the source's CDC for a sync: checks the source can serve it, sets the publication to the cdc tables, and
 * finds or creates the slot. A new slot exports the snapshot its changes start from: every cdc table is then copied
 * in it (so nothing between copy and stream is lost or doubled). With a slot already there, a table is copied only
 * when it has no lake table or position yet, or its columns changed (documented: a resnapshot), as of the slot's
 * confirmed position, and its changes since then are applied on top.
 */
export async function prepareCdc(input: CdcInput, cdcTasks: readonly TableTask[]): Promise<CdcRun> {
  let tasks = cdcTasks;
  const name = cdcName(input.sourceId);
  if (tasks.length === 0) {
    if (input.hadSlot) await dropUnused(input, name);
    return NO_CDC;
  }
  const connections = new TenantConnections(input.limits, input.signal);
  let control: pg.Client | undefined;
  // Tables failed already (each reported once), and the rest when the source refuses cdc altogether.
  let refused: TableResult[] = [];
  const refuse = (message: string): CdcRun => ({
    ...NO_CDC,
    refused: [
      ...refused,
      ...tasks.map((task) => failedTable(input.reporter, task, message, input.states.get(task.key))),
    ],
    close: () => connections.close(),
  });
  try {
    control = await openSession(input.settings, connections, { transaction: false });
    await checkCdcReady(control);
    const unstreamable = await tablesWithoutStream(control, [...input.cdcTables, ...tasks.map((t) => t.table)]);
    refused = tasks.flatMap((task) => {
      const reason = unstreamable.get(task.key);
      return reason === undefined ? [] : [failedTable(input.reporter, task, reason, input.states.get(task.key))];
    });
    tasks = tasks.filter((task) => !unstreamable.has(task.key));
    if (tasks.length === 0) return { ...NO_CDC, refused, close: () => connections.close() };
    // A table the publication did not list (new to cdc, or enabled again) missed changes: it is copied.
    const published = await publishedTables(control, name);
    // One the publication cannot list (an UNLOGGED table) would fail it for every other table too.
    const all = [...input.cdcTables, ...tasks.map((t) => t.table)].filter(
      (t) => !unstreamable.has(`${t.schema}.${t.name}`),
    );
    const tables = all.filter((t, i) => all.findIndex((o) => o.schema === t.schema && o.name === t.name) === i);
    await ensurePublication(control, name, tables);
    let slot = await slotState(control, name);
    let snapshot: CdcSnapshot | undefined;
    let from: string;
    if (slot?.walStatus === 'lost') {
      // The server removed WAL the slot needed: its changes are gone, so every table is copied again.
      await control.query('SELECT pg_drop_replication_slot($1)', [name]);
      slot = undefined;
    }
    if (!slot) {
      const created = await createSlot(input.settings, connections, name);
      snapshot = {
        name: created.snapshot,
        shared: async () => void (await created.connection.end().catch(() => undefined)),
      };
      from = created.consistentPoint;
    } else from = slot.confirmedLsn;
    const copyTasks: TableTask[] = [];
    const deferred: DeferredTable[] = [];
    for (const task of tasks) {
      const table = await input.lake.tables.get(input.organizationId, task.lakeSchema, task.lakeTable);
      const state = input.states.get(task.key);
      const columns = await currentColumns(control, task.table.schema, task.table.name);
      const keyProblem = keyColumnsProblem(
        task.table,
        columns.map((c) => c.name),
      );
      if (keyProblem) {
        refused.push(failedTable(input.reporter, task, keyProblem, state));
        continue;
      }
      const change = state ? compareColumns(state.columns, columns) : undefined;
      // Logged as any sync logs a schema change. A column added comes with the changes (earlier rows NULL), one
      // dropped stops being written; a retyped one copies the table whole (documented: a resnapshot).
      if (change && change.added.length + change.dropped.length + change.retyped.length > 0)
        input.reporter.schemaChange(task, change);
      const changed =
        state !== undefined &&
        table !== undefined &&
        needsResnapshot(state.columns, columns, new Set(table.snapshot.columns.map((c) => c.name)), task.softDeletes);
      const missed = !published.has(task.key);
      const partitions = await partitionsNow(control, task.table.schema, task.table.name);
      const moved = partitions !== undefined && table?.tags[PARTITIONS_TAG] !== partitions;
      if (
        snapshot ||
        !table ||
        table.tags[CDC_TAG] === undefined ||
        changed ||
        missed ||
        moved ||
        task.cdcCopy === true
      )
        copyTasks.push({ ...task, cdcTag: from, ...(partitions !== undefined ? { cdcPartitions: partitions } : {}) });
      else deferred.push({ task, columns: columns.map((c) => ({ name: c.name, type: c.type })) });
    }
    const moneyScale = Number(
      (await control.query<{ s: number }>("SELECT scale('0'::money::numeric) AS s")).rows[0]?.s ?? 2,
    );
    // The slot may move on only past changes every published table has taken: a sync of some of them leaves it.
    const whole = tables.every((t) => tasks.some((task) => task.key === `${t.schema}.${t.name}`));
    const session = { control, name, moneyScale, connections, whole };
    return {
      snapshot,
      copyTasks,
      refused,
      applyChanges: (copied, signal) => applyAll(input, session, deferred, copied, signal),
      close: () => connections.close(),
    };
  } catch (error) {
    if (error instanceof CdcRefusal) {
      const run = refuse(error.message);
      return run;
    }
    await connections.close();
    throw error;
  }
}

/**
 * Why a table with inheriting tables (`INHERITS`, not partitions) cannot be a cdc table: its copy holds its
 * children's rows, as a SELECT of it does, but the publication sends a child's changes as the child's own, so those
 * rows would go stale.
 */
const INHERITED_REFUSAL =
  "this table has tables that inherit from it: a copy of it holds their rows, but their changes are not the table's own, so cdc would let those rows go stale. Sync it in full or incremental mode (PATCH the source's tables), or make the inheriting tables cdc tables of their own";

/**
 * Which of the tables (`schema.table`) have tables inheriting from them that are not partitions. Looked up by name
 * in the catalog (to_regclass would fail the whole sync on a schema the role may not use, where the publication's
 * own refusal says what to do).
 */
async function tablesWithChildren(
  client: pg.Client,
  tables: readonly { schema: string; name: string }[],
): Promise<Set<string>> {
  const rows = await client.query<{ key: string }>(
    `SELECT DISTINCT t.s || '.' || t.n AS key
       FROM unnest($1::text[], $2::text[]) AS t(s, n)
       JOIN pg_namespace n ON n.nspname = t.s
       JOIN pg_class parent ON parent.relnamespace = n.oid AND parent.relname = t.n
       JOIN pg_inherits i ON i.inhparent = parent.oid
       JOIN pg_class child ON child.oid = i.inhrelid
      WHERE NOT child.relispartition`,
    [tables.map((t) => t.schema), tables.map((t) => t.name)],
  );
  return new Set(rows.rows.map((r) => r.key));
}

/**
 * Why a table is UNLOGGED refused as a cdc table: PostgreSQL writes none of its changes to the WAL, so there are none
 * to stream, and a publication cannot list it (it failed the whole sync, every other cdc table with it).
 */
const UNLOGGED_REFUSAL =
  "this table is UNLOGGED: PostgreSQL writes none of its changes to the WAL, so cdc has nothing to read. Sync it in full or incremental mode (PATCH the source's tables), or make it logged (ALTER TABLE … SET LOGGED)";

/** The tables (`schema.table`) whose changes cannot be streamed, each with the reason it is refused as a cdc table. */
async function tablesWithoutStream(
  client: pg.Client,
  tables: readonly { schema: string; name: string }[],
): Promise<Map<string, string>> {
  const refused = new Map<string, string>();
  // The publication's tables and the sync's overlap: each looked at once.
  const each = [...new Map(tables.map((t) => [`${t.schema}.${t.name}`, t])).values()];
  for (const key of await tablesWithChildren(client, each)) refused.set(key, INHERITED_REFUSAL);
  const unlogged = await client.query<{ key: string }>(
    `SELECT DISTINCT t.s || '.' || t.n AS key
       FROM unnest($1::text[], $2::text[]) AS t(s, n)
       JOIN pg_namespace n ON n.nspname = t.s
       JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.n
      WHERE c.relpersistence = 'u'`,
    [each.map((t) => t.schema), each.map((t) => t.name)],
  );
  for (const { key } of unlogged.rows) refused.set(key, UNLOGGED_REFUSAL);
  // Generated columns (PostgreSQL 12 on; read through to_jsonb, as older servers have no attgenerated to name) are
  // left out of every change the stream sends: a table holding one failed every sync after its copy, each saying the
  // next would read it whole.
  const generated = await client.query<{ key: string; columns: string }>(
    `SELECT t.s || '.' || t.n AS key, string_agg(a.attname, ', ' ORDER BY a.attnum) AS columns
       FROM unnest($1::text[], $2::text[]) AS t(s, n)
       JOIN pg_namespace n ON n.nspname = t.s
       JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.n
       JOIN pg_attribute a ON a.attrelid = c.oid
      WHERE a.attnum > 0 AND NOT a.attisdropped AND coalesce(to_jsonb(a) ->> 'attgenerated', '') <> ''
      GROUP BY 1`,
    [each.map((t) => t.schema), each.map((t) => t.name)],
  );
  for (const { key, columns } of generated.rows)
    refused.set(
      key,
      `this table has generated columns (${columns.slice(0, 300)}), whose values PostgreSQL's logical replication leaves out of every change: its rows would go stale. Sync it in full or incremental mode (PATCH the source's tables)`,
    );
  return refused;
}

/** The tables the publication lists now (`schema.table`); none before it exists. */
async function publishedTables(client: pg.Client, publication: string): Promise<Set<string>> {
  const rows = await client.query<{ key: string }>(
    "SELECT schemaname || '.' || tablename AS key FROM pg_publication_tables WHERE pubname = $1",
    [publication],
  );
  return new Set(rows.rows.map((r) => r.key));
}

/** A cdc table this sync does not copy: only its changes are applied. `columns` are the source's now. */
interface DeferredTable {
  task: TableTask;
  columns: { name: string; type: string }[];
}

interface CdcSession {
  control: pg.Client;
  name: string;
  moneyScale: number;
  connections: TenantConnections;
  /** The sync reads every table the publication lists. */
  whole: boolean;
}

/**
 * Reads the slot's changes up to now, applies each table's as one commit with its new position, and moves the slot
 * on only when every cdc table of the sync is applied (a table that failed keeps the source's WAL for it).
 */
async function applyAll(
  input: CdcInput,
  session: CdcSession,
  deferred: readonly DeferredTable[],
  copied: readonly TableResult[],
  signal: AbortSignal,
): Promise<TableResult[]> {
  const { control } = session;
  const copy = pgDriver().copyStreams;
  const ready = [
    ...deferred.map(({ task, columns }) => ({ task, columns, result: undefined as TableResult | undefined })),
    ...copied.filter((r) => r.error === undefined).map((r) => ({ task: r.task, columns: r.columns, result: r })),
  ];
  const results: TableResult[] = copied.filter((r) => r.error !== undefined);
  if (ready.length === 0) return results;
  const upto = (await control.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn ?? '0/0';
  mkdirSync(input.stagingDir, { recursive: true, mode: 0o700 });
  const budget = new StagingBudget(input.limits);
  const base = (key: string): string => `c_${createHash('sha256').update(key).digest('hex').slice(0, 20)}`;
  const positions = new Map<string, bigint>();
  for (const { task } of ready) {
    const table = await input.lake.tables.get(input.organizationId, task.lakeSchema, task.lakeTable);
    positions.set(task.key, parseLsn(table?.tags[CDC_TAG] ?? task.cdcTag ?? '0/0'));
  }
  let staged: Map<string, StagedChanges>;
  let stream: pg.Client | undefined;
  let releaseAhead: (() => void) | undefined;
  try {
    // A session of its own for the change stream: its one statement may rightly answer with more than any bound on
    // a statement's rows, and is read as it arrives, a bounded part at a time (changes.ts); the control session's
    // catalog statements stay bounded. It is closed once the stream is read, or when the read stops early.
    stream = await openSession({ ...input.settings, maxResultBytes: Number.POSITIVE_INFINITY }, session.connections, {
      transaction: false,
    });
    ({ staged } = await stageChanges({
      client: stream,
      slot: session.name,
      publication: session.name,
      upto,
      targets: ready.map(({ task, result }) => ({
        key: task.key,
        schema: task.table.schema,
        name: task.table.name,
        from: positions.get(task.key) as bigint,
        copied: result !== undefined,
      })),
      stagingDir: input.stagingDir,
      fileOf: (key, segment) => {
        // A table's first change means a commit: its DuckDB instance opens while the rest of the stream is read.
        releaseAhead ??= input.lake.openWriteAhead();
        return changesFile(input.stagingDir, base(key), segment);
      },
      budget,
    }));
    await stream.end();
  } catch (error) {
    releaseAhead?.();
    stream?.end().catch(() => undefined);
    // One stream carries every cdc table's changes: when it cannot be read (a change past the caps, say), each
    // table fails with the reason, and the slot stays where it was.
    const message = failureReason(error, { ...input, signal, settings: input.settings });
    return [
      ...results,
      ...ready.map(({ task, result }) =>
        failedTable(input.reporter, task, message, input.states.get(task.key), result?.columns),
      ),
    ];
  }
  let allApplied = true;
  try {
    for (const { task, columns, result } of ready) {
      const changes = staged.get(task.key);
      try {
        const applied = changes
          ? await applyTable(input, session, copy, task, changes, upto, budget, base(task.key), signal)
          : undefined;
        const table = await input.lake.tables.get(input.organizationId, task.lakeSchema, task.lakeTable);
        const rows = table?.snapshot.rowCount ?? 0;
        input.reporter.phase(task, 'committed', {
          completed: rows,
          total: rows,
          changes: changes
            ? { inserts: changes.inserts, updates: changes.updates, deletes: changes.deletes }
            : { inserts: 0, updates: 0, deletes: 0 },
          ...(applied ? { deleted: applied.deleted } : {}),
        });
        results.push({
          task,
          rows,
          transferred: (result?.transferred ?? 0) + (changes ? changes.inserts + changes.updates + changes.deletes : 0),
          cursorValue: null,
          columns,
        });
      } catch (error) {
        allApplied = false;
        const message = failureReason(error, { ...input, signal, settings: input.settings });
        results.push(failedTable(input.reporter, task, message, input.states.get(task.key), result?.columns));
      } finally {
        for (const segment of changes?.segments ?? []) rmSync(segment.file, { force: true });
      }
    }
  } finally {
    releaseAhead?.();
  }
  // Only once every table's changes are committed may the source forget them. A cancelled sync leaves the slot
  // where it was: the next one reads the changes again, and each table skips those its tag says it has.
  if (signal.aborted) return results;
  if (allApplied && session.whole) await advanceSlot(control, session.name, upto);
  const slot = await slotState(control, session.name);
  if (slot) await input.onSlot({ ...slot, name: session.name });
  return results;
}

/**
 * No table of the source uses cdc any more: its slot and publication are dropped, so the source keeps no WAL for
 * lake. Best effort: a source that cannot be reached now is tried again at its next sync.
 */
async function dropUnused(input: CdcInput, name: string): Promise<void> {
  const connections = new TenantConnections(input.limits, input.signal);
  try {
    const control = await openSession(input.settings, connections, { transaction: false });
    await dropCdc(control, name);
    await input.onSlot(null);
  } catch {
    // Kept as reported; the next sync tries again.
  } finally {
    await connections.close();
  }
}

/** One table's changes as one commit: the rows they leave, the keys they delete, the position they reach. */
async function applyTable(
  input: CdcInput,
  session: CdcSession,
  copy: { to: typeof CopyTo; from: typeof CopyFrom },
  task: TableTask,
  staged: StagedChanges,
  upto: string,
  budget: StagingBudget,
  base: string,
  signal: AbortSignal,
): Promise<MergeCounts> {
  input.reporter.phase(task, 'loading');
  const previous = await input.lake.tables.get(input.organizationId, task.lakeSchema, task.lakeTable);
  const converted = await convertChanges({
    client: session.control,
    copy,
    schema: task.table.schema,
    name: task.table.name,
    primaryKey: task.table.primaryKey,
    staged,
    moneyScale: session.moneyScale,
    softDeletes: task.softDeletes,
    stagingDir: input.stagingDir,
    base,
    budget,
    tableKey: task.key,
    signal,
    lakeTypes: new Map((previous?.snapshot.columns ?? []).map((c) => [c.name, c.type])),
  });
  try {
    return await commitChanges(input, task, converted, previous, upto);
  } finally {
    if (converted.file) rmSync(converted.file, { force: true });
    budget.release(task.key, converted.bytes + staged.bytes);
  }
}
