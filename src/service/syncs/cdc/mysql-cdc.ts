import { createHash } from 'node:crypto';
import { appendFileSync, rmSync } from 'node:fs';
import type * as mysql from 'mysql2';
import {
  binlogPrivilegeRefusal,
  checkBinlogReady,
  comparePositions,
  currentPosition,
  formatPosition,
  keptLogFiles,
  parsePosition,
  positionLost,
  singleByteCharsets,
  systemVersionedTables,
  cascadingForeignKeys,
  type BinlogPosition,
} from '../../connectors/mysql-binlog.js';
import { CdcRefusal, type ConnectorSettings } from '../../connectors/types.js';
import { lakeColumnNames } from '../../sources/lake-names.js';
import { mark } from '../../../support/debug-timing.js';
import { compareColumns } from '../pg-columns.js';
import type { ColumnPlan } from '../pg-types.js';
import { currentColumns } from '../mysql-columns.js';
import { planMysqlColumn, type MysqlColumn } from '../mysql-types.js';
import { StagingBudget } from '../staging-budget.js';
import { failedTable, failureReason } from '../table-failure.js';
import { keyColumnsProblem } from '../key-columns.js';
import type { ExtractionContext, SyncReporter, TableResult, TableTask } from '../types.js';
import type { ConvertedChanges } from './apply.js';
import { binlogValueReader, type BinlogValueReader } from './binlog-values.js';
import { readBinlog, type BinlogChange, type BinlogTarget } from './binlog-read.js';
import { sameKeyValue } from './binlog-rows.js';
import { CDC_TAG, commitChanges } from './commit.js';
import { changesFile } from './changes.js';

export interface BinlogCdcInput extends Omit<ExtractionContext, 'tasks'> {
  settings: ConnectorSettings;
}

/** What a MySQL sync does for its cdc tables: copies some whole in its snapshot, then applies the log to all. */
export interface BinlogRun {
  /** The cdc tables read whole in the sync's snapshot, each tagged with where the log stood when it began. */
  copyTasks: TableTask[];
  /** The cdc tables the source cannot serve, failed with what to do. */
  refused: TableResult[];
  /** After the snapshot: every cdc table's changes since its position, one commit each, tagged with the new one. */
  applyChanges(copied: readonly TableResult[]): Promise<TableResult[]>;
}

/** A cdc table the sync does not copy: only its changes are applied. */
interface DeferredTable {
  task: TableTask;
  columns: MysqlColumn[];
}

/** Column types the binary log carries but lake cannot read from it (their text is MySQL's own, ST_AsText's). */
const SPATIAL =
  /^(geometry|point|linestring|polygon|multipoint|multilinestring|multipolygon|geometrycollection|geomcollection)$/i;

/**
 * Opens a MySQL source's change capture for a sync, before its snapshot begins: checks the binary log is on in row
 * format with whole images and readable, notes where it stands, and picks the tables to copy whole (new to cdc, no
 * position yet, columns changed, a position whose log file the server purged, or a full refresh). The others only
 * take their changes. A copy is tagged with the position read before the snapshot began: changes between that and
 * the snapshot are in both, and applying them again leaves each key as its last change left it (whole row images,
 * merged by key), so nothing is lost or doubled without locking the source's tables.
 */
export async function prepareBinlog(
  connection: mysql.Connection,
  input: BinlogCdcInput,
  tasks: readonly TableTask[],
): Promise<BinlogRun> {
  const refusedResult = (task: TableTask, message: string): TableResult =>
    failedTable(input.reporter, task, message, input.states.get(task.key));
  if (tasks.length === 0) return { copyTasks: [], refused: [], applyChanges: async () => [] };
  let start: BinlogPosition;
  let kept: Set<string>;
  try {
    await checkBinlogReady(connection);
    start = await currentPosition(connection);
    kept = await keptLogFiles(connection);
  } catch (error) {
    const refusal = error instanceof CdcRefusal ? error : binlogPrivilegeRefusal(error);
    if (!refusal) throw error;
    return {
      copyTasks: [],
      refused: tasks.map((t) => refusedResult(t, refusal.message)),
      applyChanges: async () => [],
    };
  }
  const copyTasks: TableTask[] = [];
  const deferred: DeferredTable[] = [];
  const refused: TableResult[] = [];
  const charsets = new Map<string, string[] | undefined>();
  const versioned = await systemVersionedTables(
    connection,
    tasks.map((t) => t.table.name),
  );
  const cascading = await cascadingForeignKeys(
    connection,
    tasks.map((t) => t.table.name),
  );
  for (const task of tasks) {
    if (versioned.has(task.table.name)) {
      refused.push(
        refusedResult(
          task,
          'cdc cannot follow a system-versioned table: its binary log holds the history rows each change keeps, which a copy of the table does not read; sync the table incremental or in full',
        ),
      );
      continue;
    }
    const cascade = cascading.get(task.table.name);
    if (cascade !== undefined) {
      refused.push(
        refusedResult(
          task,
          `cdc cannot follow this table: its rows also change when a parent row's change cascades through its foreign key (${cascade.slice(0, 200)}), which the server applies without writing those rows to the binary log, so the lake would keep rows the source changed or removed; sync the table incremental or in full`,
        ),
      );
      continue;
    }
    const columns = await currentColumns(connection, task.table);
    const keyProblem = keyColumnsProblem(
      task.table,
      columns.map((c) => c.name),
    );
    if (keyProblem) {
      refused.push(refusedResult(task, keyProblem));
      continue;
    }
    const spatial = columns.filter((c) => SPATIAL.test(c.dataType)).map((c) => c.name);
    if (spatial.length > 0) {
      refused.push(
        refusedResult(
          task,
          `cdc cannot read spatial columns (${spatial.join(', ')}) from the binary log; sync the table incremental or in full`,
        ),
      );
      continue;
    }
    const unreadable = await unreadableText(connection, columns, charsets);
    if (unreadable.length > 0) {
      refused.push(
        refusedResult(
          task,
          `cdc cannot read text in the ${[...new Set(unreadable.map((c) => textCharset(c)))].join(', ')} character set (${unreadable.map((c) => c.name).join(', ')}) from the binary log as the server converts it; sync the table incremental or in full`,
        ),
      );
      continue;
    }
    const table = await input.lake.tables.get(input.organizationId, task.lakeSchema, task.lakeTable);
    const state = input.states.get(task.key);
    const summary = columns.map((c) => ({ name: c.name, type: c.columnType }));
    const change = state ? compareColumns(state.columns, summary) : undefined;
    const changed = change !== undefined && change.added.length + change.dropped.length + change.retyped.length > 0;
    const at = parsePosition(table?.tags[CDC_TAG]);
    const lost = at !== undefined && positionLost(at, start, kept);
    if (!table || !state || !at || lost || changed || task.cdcCopy === true || columns.length === 0)
      copyTasks.push({ ...task, incremental: false, cdcTag: formatPosition(start) });
    else deferred.push({ task, columns });
  }
  return {
    copyTasks,
    refused,
    applyChanges: (copied) =>
      applyAll(connection, input, deferred, copied, new Map([...charsets].flatMap(([n, t]) => (t ? [[n, t]] : [])))),
  };
}

/**
 * Text columns in a character set lake cannot read from the log exactly as the server converts it for a copy: one
 * of several bytes a character (sjis, gbk, big5, …) other than Unicode's, whose tables differ from the decoder's
 * (sjis's 0x815F is `\` to MySQL, `＼` to iconv-lite). Single-byte sets are read by the server's own table, fetched
 * once into `charsets`; UTF-8, latin1 and Unicode's own encodings are read as they are.
 */
async function unreadableText(
  connection: mysql.Connection,
  columns: readonly MysqlColumn[],
  charsets: Map<string, string[] | undefined>,
): Promise<MysqlColumn[]> {
  const foreign = columns.filter((c) => {
    const charset = textCharset(c);
    return charset !== undefined && !READ_AS_IS.has(charset);
  });
  const unknown = [...new Set(foreign.map((c) => textCharset(c) as string))].filter((n) => !charsets.has(n));
  if (unknown.length > 0) {
    const found = await singleByteCharsets(connection, unknown);
    for (const name of unknown) charsets.set(name, found.get(name));
  }
  return foreign.filter((c) => charsets.get(textCharset(c) as string) === undefined);
}

/** Character sets whose text the log's reader decodes as the server does: UTF-8, latin1 and Unicode's encodings. */
const READ_AS_IS = new Set(['utf8', 'utf8mb3', 'utf8mb4', 'latin1', 'ucs2', 'utf16', 'utf16le', 'utf32']);

/** A text column's character set (its collation's first word); undefined for other columns. */
function textCharset(column: MysqlColumn): string | undefined {
  if (!/^(var)?char$|text$/i.test(column.dataType) || !column.collation) return undefined;
  return column.collation.split('_')[0]?.toLowerCase();
}

/** One table's changes staged as the CSV a cdc commit reads (changeRowsSql): `seq, op, unchanged, columns…`. */
interface StagedTable {
  task: TableTask;
  columns: MysqlColumn[];
  plans: ColumnPlan[];
  /** The position its changes are read from (its tag). */
  from: BinlogPosition;
  /** Per column: its decoded value as staged text. */
  readers: BinlogValueReader[];
  file: string;
  bytes: number;
  longest: number;
  pending: string[];
  pendingBytes: number;
  counts: { inserts: number; updates: number; deletes: number };
  /** Renamed into place at the source among the changes (a RENAME): read whole by the next sync instead. */
  replaced: boolean;
  result: TableResult | undefined;
}

/** The position tag of a table that must be read whole: no position (parsePosition reads none in it). */
const REPLACED = 'replaced at the source';

/** Bytes of staged lines written at once. */
const FLUSH_BYTES = 1 << 20;

/**
 * Reads the log from the earliest position of the ready tables to where it ends now, and commits each table's
 * changes as one snapshot tagged with that end. A table whose commit fails keeps its position (its tag), so the next
 * sync reads its changes again; the others move on.
 */
async function applyAll(
  connection: mysql.Connection,
  input: BinlogCdcInput,
  deferred: readonly DeferredTable[],
  copied: readonly TableResult[],
  charsets: ReadonlyMap<string, readonly string[]>,
): Promise<TableResult[]> {
  const results: TableResult[] = copied.filter((r) => r.error !== undefined);
  const ready = [
    ...deferred.map((d) => ({ ...d, result: undefined as TableResult | undefined })),
    ...copied
      .filter((r) => r.error === undefined)
      .map((r) => ({ task: r.task, columns: undefined as MysqlColumn[] | undefined, result: r })),
  ];
  if (ready.length === 0) return results;
  const budget = new StagingBudget(input.limits);
  const staged: StagedTable[] = [];
  const targets: BinlogTarget[] = [];
  let seq = 0;
  let releaseAhead: (() => void) | undefined;
  let upto: BinlogPosition;
  try {
    upto = await currentPosition(connection);
    for (const entry of ready) {
      const { task } = entry;
      const columns = entry.columns ?? (await currentColumns(connection, task.table));
      const table = await input.lake.tables.get(input.organizationId, task.lakeSchema, task.lakeTable);
      const from = parsePosition(table?.tags[CDC_TAG]);
      if (!table || !from) throw new Error(`${task.key} has no change position; the next sync reads it whole`);
      const plans = plansAsTable(task, columns, new Map(table.snapshot.columns.map((c) => [c.name, c.type])));
      const base = `b_${createHash('sha256').update(task.key).digest('hex').slice(0, 20)}`;
      const entryStaged: StagedTable = {
        task,
        columns,
        plans,
        from,
        readers: columns.map((c, i) => binlogValueReader(c, plans[i] as ColumnPlan)),
        file: changesFile(input.stagingDir, base, 0),
        bytes: 0,
        longest: 0,
        pending: [],
        pendingBytes: 0,
        counts: { inserts: 0, updates: 0, deletes: 0 },
        replaced: false,
        result: entry.result,
      };
      staged.push(entryStaged);
      targets.push({
        schema: task.table.schema,
        name: task.table.name,
        key: task.table.primaryKey,
        from,
        change: (change) => {
          // A change means a commit: its DuckDB instance opens while the rest of the log is read.
          releaseAhead ??= input.lake.openWriteAhead();
          stageChange(entryStaged, change, ++seq, budget, input.reporter);
        },
      });
    }
    for (const table of staged) input.reporter.phase(table.task, 'extracting', { completed: 0, total: null });
    const from = targets.map((t) => t.from).reduce((a, b) => ((comparePositions(a, b) ?? 0) <= 0 ? a : b));
    mark('binlog: tables planned');
    await readBinlog({
      settings: input.settings,
      from,
      upto,
      targets,
      charsets,
      limits: input.limits,
      signal: input.signal,
    });
    for (const table of staged) flush(table, budget);
    mark(`binlog: ${seq} changes read`);
  } catch (error) {
    // One log carries every table's changes: when it cannot be read, each table fails with the reason and keeps
    // its position.
    releaseAhead?.();
    for (const table of staged) rmSync(table.file, { force: true });
    // The replication rights are checked when the log is read: that refusal says what to grant.
    const message = binlogPrivilegeRefusal(error)?.message ?? failureReason(error, input);
    return [
      ...results,
      ...ready.map(({ task, result }) =>
        failedTable(input.reporter, task, message, input.states.get(task.key), result?.columns),
      ),
    ];
  }
  try {
    for (const table of staged) results.push(await commitTable(input, table, upto, budget));
  } finally {
    releaseAhead?.();
  }
  return results;
}

/** The plans a table's changes load through: the table's lake types, so a change merges into it as it is typed. */
function plansAsTable(task: TableTask, columns: readonly MysqlColumn[], lakeTypes: Map<string, string>): ColumnPlan[] {
  const names = lakeColumnNames(
    columns.map((c) => c.name),
    task.softDeletes,
  );
  // A DECIMAL wider than 38 digits was typed by the values a copy held: the changes are read as the table has it.
  const wide = new Map<string, number>();
  columns.forEach((c, i) => {
    const type = lakeTypes.get(names[i] as string) ?? '';
    const narrowed = /^DECIMAL\(38,(\d+)\)$/.exec(type);
    if (narrowed) wide.set(c.name, 38 - Number(narrowed[1]));
    else if (type === 'BIGNUM' || type === 'DOUBLE') wide.set(c.name, 1000);
  });
  return columns.map((c, i) => {
    const plan = { ...planMysqlColumn(c, wide), name: names[i] as string };
    const held = lakeTypes.get(plan.name);
    if (held !== undefined && held !== plan.lakeType)
      throw new Error(
        `the column ${plan.name} of ${task.key} is ${held} in the lake but its changes read as ${plan.lakeType}; run lake sync start --full-refresh to read the table whole`,
      );
    return plan;
  });
}

/** A value as a CSV field: NULL empty, anything else quoted (so an empty string stays apart from NULL). */
const field = (text: string | null): string =>
  text === null ? '' : text.includes('"') ? `"${text.replace(/"/g, '""')}"` : `"${text}"`;

function stageChange(
  table: StagedTable,
  change: BinlogChange,
  seq: number,
  budget: StagingBudget,
  reporter: SyncReporter,
): void {
  const line = (op: string, row: Record<string, unknown> | undefined): void => {
    // Built by concatenation: this runs for every change, and an array of fields joined cost a third more.
    let text = `${seq},${op},,`;
    const { columns, readers } = table;
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) text += ',';
      if (row !== undefined) text += field((readers[i] as BinlogValueReader)(row[(columns[i] as MysqlColumn).name]));
    }
    text += '\n';
    const bytes = Buffer.byteLength(text);
    budget.checkRecord(bytes);
    table.longest = Math.max(table.longest, bytes);
    table.pending.push(text);
    table.pendingBytes += bytes;
    if (table.pendingBytes < FLUSH_BYTES) return;
    flush(table, budget);
    // The changes read so far, as a copy reports its rows.
    reporter.rows(table.task, table.counts.inserts + table.counts.updates + table.counts.deletes);
  };
  if (table.replaced) return;
  if (change.op === 'R') {
    table.replaced = true;
    return;
  }
  if (change.op === 'T') return line('T', undefined);
  if (change.op === 'I') table.counts.inserts++;
  else if (change.op === 'D') table.counts.deletes++;
  else table.counts.updates++;
  if (change.op === 'U') {
    // An update that changed the key deletes the old key first: its row is gone, the new one takes its place.
    const before = change.before;
    const moved = table.task.table.primaryKey.some((k) => !sameKeyValue(before[k], change.row[k]));
    if (moved) line('D', before);
  }
  line(change.op, change.row);
}

function flush(table: StagedTable, budget: StagingBudget): void {
  if (table.pendingBytes === 0) return;
  budget.reserve(table.task.key, table.pendingBytes);
  appendFileSync(table.file, table.pending.join(''), { mode: 0o600 });
  table.bytes += table.pendingBytes;
  table.pending = [];
  table.pendingBytes = 0;
}

/**
 * A table with no change of its own still moves its position on once the log has passed to another file or some
 * way into this one: every sync reads the log from the earliest position, and a purged file would mean reading the
 * table whole. Otherwise it keeps it, and the catalog gains no snapshot for nothing.
 */
const QUIET_ADVANCE_BYTES = 16 << 20;

async function commitTable(
  input: BinlogCdcInput,
  table: StagedTable,
  upto: BinlogPosition,
  budget: StagingBudget,
): Promise<TableResult> {
  const position = formatPosition(upto);
  const { task, counts } = table;
  const columns = table.columns.map((c) => ({ name: c.name, type: c.columnType }));
  try {
    if (table.replaced) {
      // No position: the next sync copies the table (prepareBinlog), as it is then.
      await input.lake.tagTable(input.organizationId, task.lakeSchema, task.lakeTable, { [CDC_TAG]: REPLACED });
      return failedTable(
        input.reporter,
        task,
        `${task.key} was replaced at the source while its changes were read (a table renamed into its place, a partition dropped, truncated or exchanged, a change logged as a statement, rows logged without all their columns, or an XA transaction rolled back after it was logged: rows the binary log does not carry whole); the next sync reads it whole`,
        input.states.get(task.key),
        columns,
      );
    }
    const previous = await input.lake.tables.get(input.organizationId, task.lakeSchema, task.lakeTable);
    let deleted: number | undefined;
    if (table.bytes > 0) {
      input.reporter.phase(task, 'loading');
      const converted: ConvertedChanges = {
        file: table.file,
        longest: table.longest,
        bytes: table.bytes,
        plans: table.plans,
        lakeKey: task.table.primaryKey.map((k) => table.plans[table.columns.findIndex((c) => c.name === k)]?.name ?? k),
        notNull: new Set(table.columns.flatMap((c, i) => (c.notNull ? [table.plans[i]?.name as string] : []))),
        columns,
      };
      deleted = (await commitChanges(input, task, converted, previous, position)).deleted;
    } else if (table.from.file !== upto.file || upto.position - table.from.position > QUIET_ADVANCE_BYTES)
      await input.lake.tagTable(input.organizationId, task.lakeSchema, task.lakeTable, { [CDC_TAG]: position });
    const after = await input.lake.tables.get(input.organizationId, task.lakeSchema, task.lakeTable);
    const rows = after?.snapshot.rowCount ?? 0;
    input.reporter.phase(task, 'committed', {
      completed: rows,
      total: rows,
      changes: counts,
      ...(deleted !== undefined ? { deleted } : {}),
    });
    const changes = counts.inserts + counts.updates + counts.deletes;
    return { task, rows, transferred: (table.result?.transferred ?? 0) + changes, cursorValue: null, columns };
  } catch (error) {
    const message = failureReason(error, input);
    return failedTable(input.reporter, task, message, input.states.get(task.key), columns);
  } finally {
    rmSync(table.file, { force: true });
    budget.release(task.key, table.bytes);
  }
}
