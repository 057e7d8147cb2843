import { randomInt } from 'node:crypto';
import type { ConnectorSettings } from '../../connectors/types.js';
import { comparePositions, formatPosition, type BinlogPosition } from '../../connectors/mysql-binlog.js';
import type * as mysql from 'mysql2';
import { limitMysqlMessages, mysqlOptions } from '../../connectors/mysql.js';
import { messageBound } from '../../connectors/wire-limits.js';
import { mark } from '../../../support/debug-timing.js';
import type { SyncSettings } from '../settings.js';
import { EVERY_TABLE, statementEffects } from './binlog-ddl.js';
import { boundEventInflation } from './binlog-inflation.js';
import { readWith, rowImagesRead, useLakeRowImages } from './binlog-rows.js';
import { zongjiDriver } from '../../../support/source-drivers.js';

/** Row values by column name, as the decoder gives them (binlog-values.ts turns them into staged text). */
export type BinlogRow = Record<string, unknown>;

/**
 * A change of one table: an insert, an update (with the row before it), a delete, the table emptied (TRUNCATE, DROP,
 * CREATE), or its rows replaced by another table's (a RENAME: it must be read whole).
 */
export type BinlogChange =
  | { op: 'I'; row: BinlogRow }
  | { op: 'U'; row: BinlogRow; before: BinlogRow }
  | { op: 'D'; row: BinlogRow }
  | { op: 'T' }
  | { op: 'R' };

/** A table whose changes are read: those of transactions at or after `from` are passed to `change`, in order. */
export interface BinlogTarget {
  schema: string;
  name: string;
  /** The table's key columns: an update's row before it is then read for its key alone unless the key changed. */
  key?: readonly string[];
  from: BinlogPosition;
  change(change: BinlogChange): void;
}

interface ZongJiEvent {
  getTypeName(): string;
  tableId?: number;
  tableMap?: Record<number, { parentSchema: string; tableName: string }>;
  rows?: (BinlogRow | { before: BinlogRow; after: BinlogRow })[];
  /** A rows event's columns, and which of them its images (its images after an update) hold. */
  numberOfColumns?: number;
  columns_present_bitmap?: Buffer;
  columns_present_bitmap2?: Buffer;
  query?: string;
  schema?: string;
}

interface ZongJiInstance {
  options: { filename?: string; position?: number };
  /** The binary log's connection and the one that asks information_schema, made by start(). */
  connection?: mysql.Connection | null;
  ctrlConnection?: mysql.Connection | null;
  on(event: 'binlog', listener: (event: ZongJiEvent) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  on(event: 'ready' | 'stopped', listener: () => void): void;
  start(options: Record<string, unknown>): void;
  stop(): void;
}

/**
 * Reads the source's binary log from `from` to `upto` (a position the log had reached: the read ends there) and
 * passes each target table's row changes on as they come, through @vlasky/zongji (it speaks the replication
 * protocol, decodes row images, and asks information_schema for column names where the log leaves them out).
 * Bounded as every source read is: silent past the idle timeout, running past the time bound, or cancelled, the
 * connections are closed and the read fails with that reason. A change handler that throws (a staging cap, a value
 * that does not fit) ends it with that error.
 */
export async function readBinlog(input: {
  settings: ConnectorSettings;
  from: BinlogPosition;
  upto: BinlogPosition;
  targets: readonly BinlogTarget[];
  /** Single-byte character sets of the targets' text, each as the server converts its 256 bytes. */
  charsets?: ReadonlyMap<string, readonly string[]>;
  limits: SyncSettings;
  signal: AbortSignal;
}): Promise<void> {
  if ((comparePositions(input.from, input.upto) ?? -1) >= 0) return;
  const ZongJi = (await zongjiDriver()).ZongJi as new (options: object) => ZongJiInstance;
  const lakeReads = await useLakeRowImages();
  const targets = new Map(input.targets.map((t) => [`${t.schema}.${t.name}`, t]));
  const includeSchema: Record<string, string[]> = {};
  for (const t of input.targets) (includeSchema[t.schema] ??= []).push(t.name);
  const reader = new ZongJi({ ...mysqlOptions(input.settings), dateStrings: true, jsonStrings: true });
  readWith(reader, {
    charsets: input.charsets ?? new Map(),
    maxValueBytes: messageBound(input.settings).maxBytes,
    keys: new Map(input.targets.flatMap((t) => (t.key ? [[`${t.schema}.${t.name}`, t.key] as const] : []))),
  });
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let idle: NodeJS.Timeout | undefined;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      clearTimeout(bound);
      input.signal.removeEventListener('abort', cancel);
      try {
        reader.stop();
      } catch {
        // Stopping a reader that never connected has nothing to close.
      }
      if (error) reject(error);
      else {
        mark(`binlog: read, ${lakeReads ? rowImagesRead() : 'no'} row images by lake's reader`);
        resolve();
      }
    };
    const seconds = Math.round(input.limits.idleTimeoutMs / 1000);
    const watch = (): void => {
      clearTimeout(idle);
      idle = setTimeout(
        () =>
          finish(
            new Error(
              `the source sent nothing for ${seconds} s (LAKE_SYNC_IDLE_TIMEOUT_SECONDS); its connection was closed`,
            ),
          ),
        input.limits.idleTimeoutMs,
      );
    };
    const bound = setTimeout(
      () =>
        finish(new Error('the sync ran past its time bound (LAKE_SYNC_TIMEOUT_SECONDS); its connection was closed')),
      input.limits.maxDurationMs,
    );
    const cancel = (): void => finish(new Error('cancelled'));
    input.signal.addEventListener('abort', cancel);
    watch();
    // Where the log stood before the event at hand: a transaction's events come after its start, so a table takes
    // them when that is at or after its own position (kept positions are transaction boundaries).
    let before: BinlogPosition = input.from;
    reader.on('binlog', (event) => {
      if (settled) return;
      watch();
      try {
        handle(event, before);
      } catch (error) {
        finish(error as Error);
        return;
      }
      const at = { file: reader.options.filename ?? before.file, position: reader.options.position ?? 0 };
      const order = comparePositions(at, input.upto);
      if (order === undefined)
        finish(new Error(`the source's binary log changed its name (${formatPosition(at)}); the table is read whole`));
      else if (order >= 0) finish();
      else before = at;
    });
    reader.on('error', (error) => finish(unreadableEvents(error) ?? error));
    reader.on('ready', () => mark('binlog: reader ready'));
    const handle = (event: ZongJiEvent, at: BinlogPosition): void => {
      const type = event.getTypeName();
      if (type === 'Query') {
        for (const { table, effect } of statementEffects(event.query ?? '', event.schema ?? '')) {
          for (const target of table === EVERY_TABLE ? targets.values() : [targets.get(table)])
            if (target && (comparePositions(at, target.from) ?? -1) >= 0) target.change({ op: effect });
        }
        return;
      }
      if (type !== 'WriteRows' && type !== 'UpdateRows' && type !== 'DeleteRows') return;
      const map = event.tableMap?.[event.tableId ?? -1];
      const target = map && targets.get(`${map.parentSchema}.${map.tableName}`);
      if (!target || (comparePositions(at, target.from) ?? -1) < 0) return;
      // A row written or updated with some columns left out of its image (a session with binlog_row_image MINIMAL
      // or NOBLOB, which the server's FULL does not stop): what they hold is not in the log, and they would have
      // been written NULL. The table is read whole instead.
      const image = type === 'UpdateRows' ? event.columns_present_bitmap2 : event.columns_present_bitmap;
      if (type !== 'DeleteRows' && !holdsEveryColumn(image, event.numberOfColumns)) {
        target.change({ op: 'R' });
        return;
      }
      for (const row of event.rows ?? []) {
        if (type === 'WriteRows') target.change({ op: 'I', row: row as BinlogRow });
        else if (type === 'DeleteRows') target.change({ op: 'D', row: row as BinlogRow });
        else {
          const { before: old, after } = row as { before: BinlogRow; after: BinlogRow };
          target.change({ op: 'U', row: after, before: old });
        }
      }
    };
    reader.start({
      // A replica's id, unique among the server's: one in use would make the server drop the other reader.
      serverId: randomInt(0x40000000, 0x7fffffff),
      filename: input.from.file,
      position: input.from.position,
      includeSchema,
      excludeEvents: ['annotaterows'],
    });
    // Bounded as lake's own connections are: an event longer than the longest row a sync takes ends the read, and so
    // does a compressed one that inflates past it. The second connection only looks up tables' columns in
    // information_schema (mysql2 keeps each answer whole until it ends): bounded in all as a discovery is.
    if (reader.connection) {
      limitMysqlMessages(reader.connection, messageBound(input.settings));
      try {
        boundEventInflation(reader.connection, input.settings.maxRecordBytes ?? input.limits.maxRecordBytes);
      } catch (error) {
        finish(error as Error);
      }
    }
    if (reader.ctrlConnection)
      limitMysqlMessages(reader.ctrlConnection, messageBound(input.settings, { catalogOnly: true }));
  });
}

/**
 * What to do when the source logs changes in a form the reader cannot decode (MySQL 8's compressed transactions and
 * partial JSON updates): zongji says so at the first such event, naming itself. The events already in the log stay
 * unreadable, so the tables are read whole once the server logs plainly again.
 */
export function unreadableEvents(error: Error): Error | undefined {
  const setting = /TRANSACTION_PAYLOAD_EVENT/.test(error.message)
    ? {
        what: 'compresses its transactions (binlog_transaction_compression=ON)',
        fix: 'binlog_transaction_compression = OFF',
      }
    : /PARTIAL_UPDATE_ROWS_EVENT/.test(error.message)
      ? {
          what: 'logs partial JSON updates (binlog_row_value_options=PARTIAL_JSON)',
          fix: "binlog_row_value_options = ''",
        }
      : undefined;
  return (
    setting &&
    new Error(
      `the source's binary log ${setting.what}, which lake cannot read: SET GLOBAL ${setting.fix} (and in the server's configuration), then run lake sync start --full-refresh to read the tables whole`,
    )
  );
}

/** Whether a rows event's bitmap holds each of its columns (an event without them, as zongji may give, is taken whole). */
function holdsEveryColumn(bitmap: Buffer | undefined, columns: number | undefined): boolean {
  if (bitmap === undefined || columns === undefined) return true;
  for (let i = 0; i < columns; i++) if (((bitmap[i >> 3] ?? 0) & (1 << (i & 7))) === 0) return false;
  return true;
}
