import { createWriteStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import type { to as CopyTo } from 'pg-copy-streams';
import { requireCommonJs } from '../../load-commonjs.js';
import { classifyPostgresFailure, postgresClient } from '../connectors/postgres.js';
import type { ConnectorSettings } from '../connectors/types.js';
import { quoteIdentifier, quoteLiteral } from '../engine/duckdb.js';
import { MAX_LAYERS, type Lake } from '../lake/lake.js';
import { layersOf, snapshotSource } from '../lake/snapshot-sql.js';
import { planColumn, stagedName, type ColumnPlan, type NumericShape, type SourceFacts } from './pg-types.js';
import { LoadQueue } from './load-queue.js';
import { SegmentedStaging } from './segments.js';
import type { SyncReporter, TableResult, TableState, TableTask } from './types.js';

const pgIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** DuckDB's memory while loading one table; with insertion order off, large tables stream through it. */
const SYNC_MEMORY_LIMIT = '256MB';

/** Records per staged segment: large enough for DuckDB's parallel reader, small enough to overlap the COPY. */
const ROWS_PER_SEGMENT = 500_000;

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
  return result.rows.map((r) => ({ name: r.name, type: r.type, enumLabels: r.enum_labels ?? undefined, notNull: r.not_null }));
}

/**
 * For numeric columns without a declared precision: the largest scale and integer digits of the rows this sync
 * reads (the same WHERE), and whether any is NaN or infinite. It costs one more scan of the table at the source,
 * and lets such columns be exact DECIMALs (they compare and sum as numbers) wherever their values fit 38 digits.
 */
async function numericShapes(client: pg.Client, columns: readonly SourceColumn[], from: string, where: string): Promise<Map<string, NumericShape>> {
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
  const row = (await client.query<Record<string, string | number | null>>(`SELECT ${parts.join(', ')} FROM ${from}${where}`)).rows[0] ?? {};
  free.forEach((c, i) => shapes.set(c.name, { scale: Number(row[`s${i}`] ?? 0), integerDigits: Number(row[`d${i}`] ?? 1), special: Number(row[`x${i}`] ?? 0) > 0 }));
  return shapes;
}

function compareColumns(before: TableState['columns'], now: readonly SourceColumn[]): { added: string[]; dropped: string[]; retyped: string[] } {
  const old = new Map(before.map((c) => [c.name, c.type]));
  const current = new Map(now.map((c) => [c.name, c.type]));
  return {
    added: [...current.keys()].filter((n) => !old.has(n)),
    dropped: [...old.keys()].filter((n) => !current.has(n)),
    retyped: [...current].filter(([n, t]) => old.has(n) && old.get(n) !== t).map(([n]) => n),
  };
}

/** Counts CSV records as they pass (newlines outside quotes), for live progress; the exact count comes from DuckDB. */
function recordCounter(onCount: (count: number) => void): Transform {
  let count = 0;
  let quoted = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      for (let i = 0; i < chunk.length; i++) {
        const byte = chunk[i];
        if (byte === 0x22) quoted = !quoted;
        else if (byte === 0x0a && !quoted) count++;
      }
      onCount(count);
      done(null, chunk);
    },
  });
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
}

/**
 * Tables read at once when a source does not say (`sync_connections`): a core for each beyond the first, at most
 * three. Loading a table into Parquet is CPU-bound here, so on two cores a second connection bought 3% for 100 MB
 * more memory (bench/sync-tables.mjs, docs/performance.md): the default there is one.
 */
export const DEFAULT_SYNC_CONNECTIONS = Math.min(3, Math.max(1, availableParallelism() - 1));

async function openSession(settings: ConnectorSettings): Promise<pg.Client> {
  const client = postgresClient(settings, 'sync');
  client.on('error', () => {});
  await client.connect();
  await client.query("SET TimeZone = 'UTC'; SET DateStyle = 'ISO'; SET IntervalStyle = 'iso_8601'; SET extra_float_digits = 1");
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
  const wanted = Math.max(1, Math.min(Number(input.settings.config.sync_connections ?? DEFAULT_SYNC_CONNECTIONS), input.tasks.length));
  const clients: pg.Client[] = [];
  try {
    clients.push(await openSession(input.settings));
  } catch (error) {
    throw new Error(`cannot connect to the source (${classifyPostgresFailure(error)})`);
  }
  const results: TableResult[] = new Array(input.tasks.length);
  try {
    const leader = clients[0] as pg.Client;
    // Where a snapshot cannot be exported (or a helper cannot join it: the server's connection limit, say), the
    // sync reads over fewer connections; never over one that would see another point in time.
    const snapshot = wanted > 1 ? await exportSnapshot(leader) : undefined;
    for (let i = 1; snapshot !== undefined && i < wanted; i++) {
      const helper = await openSession(input.settings).catch(() => undefined);
      if (!helper) break;
      try {
        await helper.query(`SET TRANSACTION SNAPSHOT ${pgLiteral(snapshot)}`);
        clients.push(helper);
      } catch {
        await helper.end().catch(() => {});
        break;
      }
    }
    mkdirSync(input.stagingDir, { recursive: true, mode: 0o700 });
    // The session's money format, asked once: every connection shares the leader's settings.
    const moneyScale = (await leader.query<{ s: number }>("SELECT scale('0'::money::numeric) AS s")).rows[0]?.s ?? 2;
    const loads = new LoadQueue(MAX_WAITING_LOADS);
    const finishing: Promise<void>[] = [];
    let next = 0;
    await Promise.all(
      clients.map(async (client) => {
        while (next < input.tasks.length && !input.signal.aborted) {
          const index = next++;
          const task = input.tasks[index] as TableTask;
          // A failed statement aborts the whole transaction; a savepoint per table keeps the snapshot for the others.
          await client.query('SAVEPOINT lake_table');
          let sourceDone!: (ok: boolean) => void;
          const readFromSource = new Promise<boolean>((resolve) => (sourceDone = resolve));
          const result = syncTable(client, to, task, { ...input, loads }, moneyScale, sourceDone).then(
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
          result.catch(() => {});
          // The connection moves on once the table is read; its loading and commit finish meanwhile.
          await client.query((await readFromSource) ? 'RELEASE SAVEPOINT lake_table' : 'ROLLBACK TO SAVEPOINT lake_table');
        }
      }),
    );
    await Promise.all(finishing);
    await Promise.all(clients.map((client) => client.query('COMMIT')));
  } finally {
    await Promise.all(clients.map((client) => client.end().catch(() => {})));
  }
  // Tables not reached before a cancel have no result.
  return results.filter((r): r is TableResult => r !== undefined);
}

/**
 * Syncs one table: reads it from the source over `client`, then loads and commits it. `sourceDone` is told as soon
 * as the source's part is over (true) or failed (false), so the connection can move on while the load finishes.
 */
async function syncTable(
  client: pg.Client,
  to: typeof CopyTo,
  task: TableTask,
  input: PostgresSyncInput & { loads: LoadQueue },
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
    let incremental = task.incremental && state !== undefined && state.cursorValue !== null;
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
    const where = incremental && cursor && state?.cursorValue ? ` WHERE ${pgIdent(cursor)} >= ${pgLiteral(state.cursorValue)}::${cursorType}` : '';
    const from = `${pgIdent(table.schema)}.${pgIdent(table.name)}`;
    const facts: SourceFacts = {
      moneyScale,
      numericShapes: await numericShapes(client, columns, from, where),
    };
    const plans: ColumnPlan[] = columns.map((c) => planColumn(c.name, c.type, c.enumLabels, facts));
    const newCursor = cursor
      ? ((await client.query<{ max: string | null }>(`SELECT max(${pgIdent(cursor)})::text AS max FROM ${from}`)).rows[0]?.max ?? null)
      : null;
    const total = incremental ? null : table.estimatedRows;
    input.reporter.phase(task, 'extracting', { completed: 0, total });
    const notNull = new Set([...columns.filter((c) => c.notNull).map((c) => c.name), '_synced_at']);
    const previous = incremental ? input.lake.tables.get(input.organizationId, task.lakeSchema, task.lakeTable) : undefined;
    const merging = previous !== undefined && table.primaryKey.length > 0;
    // Changed rows become a new layer on the previous snapshot (the cost follows the change); a snapshot with
    // MAX_LAYERS layers, or layered on another key, is compacted instead: merged whole into one new snapshot.
    const sameKey = previous?.snapshot.mergeKey === undefined || JSON.stringify(previous.snapshot.mergeKey) === JSON.stringify(table.primaryKey);
    const layering = merging && sameKey && layersOf(previous.snapshot).length < MAX_LAYERS;
    const compacting = merging && !layering;
    const base = task.key.replace(/[^A-Za-z0-9_.-]/g, '_');
    let transferred = 0;
    const counted = (n: number): void => {
      transferred = n;
      input.reporter.rows(task, n);
    };
    const copySql = `COPY (SELECT ${plans.map((p) => p.select).join(', ')} FROM ${from}${where}) TO STDOUT WITH (FORMAT csv)`;
    const reader = (file: string): string =>
      `read_csv(${quoteLiteral(file)}, columns = {${plans.map((p, i) => `'c${i}': '${p.csvType}'`).join(', ')}}, header = false, auto_detect = false, quote = '"', escape = '"', allow_quoted_nulls = false, delim = ',')`;
    const batchOf = (file: string): string =>
      `SELECT ${plans.map((p, i) => `${p.load(stagedName(i))} AS ${quoteIdentifier(p.name)}`).join(', ')}, TIMESTAMPTZ ${quoteLiteral(input.syncedAt)} AS _synced_at FROM ${reader(file)}`;
    // zstd level 1: faster to write than DuckDB's default level and, measured on lineitem-like data, no larger.
    // Format version 2 (data page v2, delta and byte-stream-split encodings): a quarter less CPU to write and a
    // fifth smaller on the bench's tables; every reader of lake's parts is DuckDB, and Arrow and Spark read it too.
    const toParquet = async (connection: import('@duckdb/node-api').DuckDBConnection, source: string, target: string): Promise<number> =>
      Number((await connection.run(`COPY (${source}) TO ${quoteLiteral(target)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, PARQUET_VERSION v2)`)).rowsChanged);

    const committed = await input.lake.writeSnapshot(
      input.organizationId,
      task.lakeSchema,
      task.lakeTable,
      async (connection, part) => {
        // Started only once DuckDB is ready: a COPY that nobody reads would hold the connection for ever.
        const copy = client.query(to(copySql));
        const abort = (): void => void copy.destroy(new Error('cancelled'));
        input.signal.addEventListener('abort', abort, { once: true });
        try {
          if (compacting) {
            // A merge reads its batch twice, beside the previous snapshot: stage it whole first.
            const staged = join(input.stagingDir, `${base}.csv`);
            await pipeline(copy, recordCounter(counted), createWriteStream(staged, { mode: 0o600 }));
            sourceDone(true);
            input.reporter.phase(task, 'loading');
            const current = snapshotSource((previous as NonNullable<typeof previous>).snapshot, (f) => input.lake.layout.toAbsolute(f));
            const match = table.primaryKey.map((k) => `b.${quoteIdentifier(k)} IS NOT DISTINCT FROM p.${quoteIdentifier(k)}`).join(' AND ');
            return input.loads.enqueue(() =>
              toParquet(connection, `WITH b AS (${batchOf(staged)}) SELECT p.* FROM (${current}) p WHERE NOT EXISTS (SELECT 1 FROM b WHERE ${match}) UNION ALL BY NAME SELECT * FROM b`, part(0)),
            );
          }
          // A full refresh stages segments and turns each into a Parquet part while the next is still arriving, so
          // loading overlaps extraction. DuckDB reads a file on all its threads (a pipe it would read on one).
          let rows = 0;
          let parts = 0;
          let abandoned = false;
          const loaded: Promise<void>[] = [];
          const staging = new SegmentedStaging(
            input.stagingDir,
            base,
            ROWS_PER_SEGMENT,
            async (segment) => {
              const index = parts++;
              const load = input.loads.enqueue(async () => {
                // After one failure the table will not commit: the loads still queued are skipped.
                if (abandoned) return;
                try {
                  rows += await toParquet(connection, batchOf(segment), part(index));
                } catch (error) {
                  abandoned = true;
                  throw error;
                }
                rmSync(segment, { force: true });
              });
              // Handled here so a failure waits for the final await instead of crashing the process meanwhile (the
              // COPY runs to its end: a COPY cut short would leave the connection unusable for the next table).
              load.catch(() => {});
              loaded.push(load);
              await input.loads.room();
            },
            counted,
          );
          // Both must finish: a COPY that fails part-way never lets a short table be committed.
          const extracted = await pipeline(copy, staging).then(
            () => ({ ok: true as const }),
            (error: unknown) => ({ ok: false as const, error }),
          );
          if (extracted.ok) sourceDone(true);
          else abandoned = true;
          // Every load queued uses this table's DuckDB connection, closed when this function returns: none may still
          // be queued or running then (DuckDB crashes on a closed connection).
          const failedLoad = (await Promise.allSettled(loaded)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
          if (!extracted.ok) throw extracted.error;
          if (failedLoad) throw failedLoad.reason;
          input.reporter.phase(task, 'loading');
          if (parts === 0) {
            // An empty table still needs a part, so its columns are known.
            const empty = join(input.stagingDir, `${base}.empty.csv`);
            writeFileSync(empty, '');
            rows = await input.loads.enqueue(() => toParquet(connection, batchOf(empty), part(0)));
          }
          return rows;
        } finally {
          input.signal.removeEventListener('abort', abort);
        }
      },
      // Parquet stores an enum as its label: the snapshot records the enum type, and the catalog view restores it.
      { notNull, memoryLimit: SYNC_MEMORY_LIMIT, columnTypes: Object.fromEntries(plans.filter((p) => p.lakeType.startsWith('ENUM(')).map((p) => [p.name, p.lakeType])), ...(layering ? { layerOn: { previous: previous as NonNullable<typeof previous>, key: table.primaryKey } } : {}) },
    );
    input.reporter.phase(task, 'committed', { completed: committed.snapshot.rowCount, total: committed.snapshot.rowCount });
    return { task, rows: committed.snapshot.rowCount, transferred: merging ? transferred : committed.snapshot.rowCount, cursorValue: newCursor, columns: summary };
  } catch (error) {
    const message = input.signal.aborted ? 'cancelled' : withoutConnectionDetails(error instanceof Error ? error.message : String(error), input.settings);
    input.reporter.phase(task, 'failed', { error: message });
    return { task, rows: 0, transferred: 0, cursorValue: state?.cursorValue ?? null, columns: state?.columns ?? summary, error: message };
  }
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
  return clean.trim();
}
