import { appendFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import { streamRowBatches } from '../pg-row-stream.js';
import type { StagingBudget } from '../staging-budget.js';
import { decodePgoutput, parseLsn, UNCHANGED, type RelationColumn, type TupleValue } from './pgoutput.js';

/** A cdc table whose changes a sync reads: those in transactions committed at or after `from`. */
export interface ChangeTarget {
  /** `schema.table` in the source. */
  key: string;
  schema: string;
  name: string;
  from: bigint;
  /**
   * Copied whole in this sync, after its columns last changed: changes from before a column's type changed are in
   * the copy already (and would not load as the new type), so they are set aside.
   */
  copied?: boolean;
}

/** A run of one table's changes with the same columns, staged as `COPY … FROM` text. */
export interface ChangeSegment {
  file: string;
  bytes: number;
  /** The columns the stream announced for these changes (the table's relation message), in order. */
  columns: string[];
}

/**
 * One table's changes, staged as `COPY … FROM` text (`seq, op, unchanged columns, the row's columns…`): one segment,
 * or one more each time a column was added to or dropped from the table among them.
 */
export interface StagedChanges {
  segments: ChangeSegment[];
  bytes: number;
  /** The columns of its last changes. */
  columns: string[];
  inserts: number;
  updates: number;
  deletes: number;
  truncates: number;
}

/**
 * About the most of the change stream held at once, in its messages' bytes: the stream is read as it arrives, in
 * batches, and the server is made to wait while a batch is staged (pg-row-stream.ts).
 */
export const STREAM_BATCH_BYTES = 16 << 20;

/**
 * Reads the slot's changes up to `upto` (peeked, not consumed: the slot moves on only once they are in the lake)
 * and stages each target table's in a file of its own, in commit order. `client` is a session for this alone: it is
 * destroyed if the read stops early. An update that changed the key is staged as a delete of the old key and then
 * the new row. Returns the staged changes per table, and the commit position the last transaction read ended at.
 */
export async function stageChanges(input: {
  client: pg.Client;
  slot: string;
  publication: string;
  upto: string;
  targets: readonly ChangeTarget[];
  stagingDir: string;
  /** The staging file of a table's n-th segment (named by a digest: a source's names may be anything). */
  fileOf: (key: string, segment: number) => string;
  budget: StagingBudget;
  /** What is held of the stream at once (STREAM_BATCH_BYTES unless given). */
  batchBytes?: number;
}): Promise<{ staged: Map<string, StagedChanges>; lastEnd: bigint | undefined }> {
  const { client } = input;
  const targets = new Map(input.targets.map((t) => [`${t.schema}.${t.name}`, t]));
  const relations = new Map<number, { target: ChangeTarget | undefined; columns: RelationColumn[] }>();
  const staged = new Map<string, StagedChanges>();
  let finalLsn = 0n;
  let lastEnd: bigint | undefined;
  let seq = 0;
  const made = new Map<string, number>();
  const nextFile = (key: string): string => {
    const n = made.get(key) ?? 0;
    made.set(key, n + 1);
    return input.fileOf(key, n);
  };
  // Checked before it is written into the statement's SQL (it came from the source; so do the names, lake's own).
  parseLsn(input.upto);
  // A message larger than the longest record a sync takes is not sent at all: the sync fails with the cap's name.
  const maxBytes = input.budget.limits.maxRecordBytes;
  const stream = streamRowBatches<{ size: number; data: Buffer | null }>(
    client,
    `SELECT octet_length(data) AS size, CASE WHEN octet_length(data) <= ${maxBytes} THEN data END AS data
       FROM pg_logical_slot_peek_binary_changes('${input.slot}', '${input.upto}'::pg_lsn, NULL,
            'proto_version', '1', 'publication_names', '${input.publication}')`,
    // A parsed row costs a little beside its message: counted, so a stream of tiny messages is bounded too.
    (row) => Number(row.size) + 256,
    input.batchBytes ?? STREAM_BATCH_BYTES,
  );
  for await (const rows of stream) {
    // Lines by the segment (its file) they belong to.
    const lines = new Map<ChangeSegment, string[]>();
    const add = (target: ChangeTarget, op: string, values: readonly TupleValue[]): void => {
      const entry = staged.get(target.key) as StagedChanges;
      const segment = entry.segments.at(-1) as ChangeSegment;
      const unchanged = values.flatMap((v, i) => (v === UNCHANGED ? [i] : []));
      const line = [String(++seq), op, `{${unchanged.join(',')}}`, ...values.map(copyText)].join('\t');
      const list = lines.get(segment) ?? [];
      list.push(line);
      lines.set(segment, list);
      if (op === 'I') entry.inserts++;
      else if (op === 'U') entry.updates++;
      else if (op === 'D') entry.deletes++;
      else entry.truncates++;
    };
    for (const { size, data } of rows) {
      if (data === null) input.budget.checkRecord(Number(size));
      const message = decodePgoutput(data as Buffer);
      if (message.kind === 'begin') finalLsn = message.finalLsn;
      else if (message.kind === 'commit') lastEnd = message.endLsn;
      else if (message.kind === 'relation') {
        const target = targets.get(`${message.schema}.${message.name}`);
        const previous = relations.get(message.relationId)?.columns;
        relations.set(message.relationId, { target, columns: message.columns });
        if (target?.copied && previous && retyped(previous, message.columns) && staged.has(target.key)) {
          const entry = staged.get(target.key) as StagedChanges;
          for (const segment of entry.segments) await rm(segment.file, { force: true });
          input.budget.release(target.key, entry.bytes);
          staged.delete(target.key);
        }
        const names = message.columns.map((c) => c.name);
        if (target && !staged.has(target.key))
          staged.set(target.key, {
            segments: [{ file: nextFile(target.key), bytes: 0, columns: names }],
            bytes: 0,
            columns: names,
            inserts: 0,
            updates: 0,
            deletes: 0,
            truncates: 0,
          });
        else if (target) {
          const entry = staged.get(target.key) as StagedChanges;
          // Announced again with other columns (ALTER TABLE … ADD or DROP COLUMN): its later changes are a
          // segment of their own, loaded with their own column list.
          if (names.join('\u0000') !== entry.columns.join('\u0000')) {
            entry.segments.push({ file: nextFile(target.key), bytes: 0, columns: names });
            entry.columns = names;
          }
        }
      } else if (message.kind === 'insert' || message.kind === 'update' || message.kind === 'delete') {
        const relation = relations.get(message.relationId);
        const target = relation?.target;
        if (!target || finalLsn < target.from) continue;
        if (message.kind === 'insert') add(target, 'I', message.row);
        else if (message.kind === 'delete') add(target, 'D', message.key);
        else {
          if (message.key) add(target, 'D', message.key);
          add(target, 'U', message.row);
        }
      } else if (message.kind === 'truncate') {
        for (const id of message.relationIds) {
          const relation = relations.get(id);
          if (relation?.target && finalLsn >= relation.target.from)
            add(
              relation.target,
              'T',
              relation.columns.map(() => null),
            );
        }
      }
    }
    for (const [key, entry] of staged)
      for (const segment of entry.segments) {
        const list = lines.get(segment);
        if (!list) continue;
        const text = `${list.join('\n')}\n`;
        const bytes = Buffer.byteLength(text);
        input.budget.reserve(key, bytes);
        await appendFile(segment.file, text, { mode: 0o600 });
        segment.bytes += bytes;
        entry.bytes += bytes;
      }
  }
  // A table announced (a relation message) whose changes were all applied before has nothing staged.
  for (const [key, entry] of staged) {
    entry.segments = entry.segments.filter((segment) => segment.bytes > 0);
    if (entry.bytes === 0) staged.delete(key);
  }
  return { staged, lastEnd };
}

/** Whether a column kept its name but changed its type (ALTER … TYPE) between two announcements of a table. */
function retyped(before: readonly RelationColumn[], now: readonly RelationColumn[]): boolean {
  return now.some((column) => {
    const was = before.find((c) => c.name === column.name);
    return was !== undefined && (was.typeOid !== column.typeOid || was.typeModifier !== column.typeModifier);
  });
}

/** A value in COPY's text format: `\N` for NULL (and for an unchanged TOAST value, flagged apart), escapes otherwise. */
function copyText(value: TupleValue): string {
  if (value === null || value === UNCHANGED) return '\\N';
  return value.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
}

/** The staging file of one segment of a table's changes. */
export const changesFile = (stagingDir: string, base: string, segment: number): string =>
  join(stagingDir, `${base}.changes.${segment}.txt`);
