import { terminalSafe } from './terminal-text.js';
import { groupDigits } from '../support/group-digits.js';

/** What a follower knows of a running sync, built from its stream events alone. */
export interface TableLine {
  table: string;
  lakeTable: string;
  phase: string;
  completed: number;
  total: number | null;
  /** Clock time (ms) of the first and latest count, for rows per second. */
  startedAt: number;
  updatedAt: number;
  rowsPerSecond: number;
  /** Why the table failed, when it did. */
  error?: string;
  /** Rows removed because the source deleted them (a table that detects deletes). */
  deleted?: number;
  /** A cdc table's changes applied. */
  changes?: { inserts: number; updates: number; deletes: number };
}

export interface SyncProgress {
  status: string;
  tables: TableLine[];
  startedAt: number;
  error: string | null;
}

export interface ProgressEvent {
  event: string;
  data: Record<string, unknown>;
}

export const initialProgress = (now: number): SyncProgress => ({
  status: 'queued',
  tables: [],
  startedAt: now,
  error: null,
});

/** Folds one stream event into the progress; unknown events change nothing (clients ignore what they do not know). */
export function applyEvent(state: SyncProgress, event: ProgressEvent, now: number): SyncProgress {
  if (event.event === 'sync.progress') {
    const data = event.data;
    // Names and reasons from a source are only ever shown: no control character in them reaches the terminal.
    const table = terminalSafe(String(data.table));
    const before = state.tables.find((t) => t.table === table);
    const completed = Number(data.completed ?? 0);
    const startedAt = before?.startedAt ?? now;
    const elapsed = Math.max(1, now - startedAt) / 1000;
    const line: TableLine = {
      table,
      lakeTable: terminalSafe(String(data.lake_table ?? table)),
      phase: String(data.phase),
      completed,
      total: data.total === null || data.total === undefined ? null : Number(data.total),
      startedAt,
      updatedAt: now,
      rowsPerSecond: Math.round(completed / elapsed),
      ...(typeof data.error === 'string' ? { error: terminalSafe(data.error) } : {}),
      ...(typeof data.deleted === 'number' ? { deleted: data.deleted } : {}),
      ...(isChanges(data.changes) ? { changes: data.changes } : {}),
    };
    return {
      ...state,
      tables: before ? state.tables.map((t) => (t.table === table ? line : t)) : [...state.tables, line],
    };
  }
  if (event.event.startsWith('job.')) {
    const message = (event.data.error as { message?: string } | undefined)?.message;
    const error = message === undefined ? state.error : terminalSafe(message);
    return { ...state, status: String(event.data.status ?? state.status), error };
  }
  return state;
}

export function bar(completed: number, total: number | null, width = 20): string {
  if (!total || total <= 0) return '·'.repeat(width);
  const filled = Math.min(width, Math.round((completed / total) * width));
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

const count = groupDigits;

/** ", 12 deleted" after a table's count, for a table that detects deletes. */
export const deletedText = (deleted: unknown): string =>
  typeof deleted === 'number' ? `, ${count(deleted)} deleted` : '';

const isChanges = (value: unknown): value is { inserts: number; updates: number; deletes: number } =>
  typeof value === 'object' && value !== null && typeof (value as { inserts?: unknown }).inserts === 'number';

/** After a table's count: a cdc table's changes (", 3 inserted, 5 updated, 1 deleted"), else its deletes. */
export function changeText(changes: unknown, deleted: unknown): string {
  if (!isChanges(changes)) return deletedText(deleted);
  return `, ${count(changes.inserts)} inserted, ${count(changes.updates)} updated, ${count(changes.deletes)} deleted`;
}

/** One stable plain line per event, for pipes and logs. */
export function plainLine(event: ProgressEvent, at: Date): string {
  const time = at.toISOString().slice(11, 19);
  if (event.event === 'sync.progress') {
    const d = event.data;
    const total = d.total === null || d.total === undefined ? '?' : count(Number(d.total));
    return terminalSafe(
      `${time} ${String(d.table)} ${String(d.phase)} ${count(Number(d.completed ?? 0))}/${total}${changeText(d.changes, d.deleted)}${typeof d.error === 'string' ? `: ${d.error}` : ''}`,
    );
  }
  if (event.event === 'sync.schema_change') return terminalSafe(`${time} ${String(event.data.table)} schema changed`);
  const error = (event.data.error as { message?: string } | undefined)?.message;
  return terminalSafe(`${time} sync ${String(event.data.status)}${error ? `: ${error}` : ''}`);
}

export function summaryLines(state: SyncProgress): string[] {
  const rows = state.tables.filter((t) => t.phase === 'committed').reduce((sum, t) => sum + t.completed, 0);
  const seconds = ((Date.now() - state.startedAt) / 1000).toFixed(1);
  const lines = [
    `sync ${state.status}: ${state.tables.filter((t) => t.phase === 'committed').length} of ${state.tables.length} tables, ${count(rows)} rows, ${seconds} s`,
  ];
  for (const t of state.tables)
    lines.push(
      `  ${t.lakeTable}  ${t.phase}  ${t.error ? t.error : `${count(t.completed)} rows${deletedText(t.deleted)}`}`,
    );
  if (state.error) lines.push(`  ${state.error}`);
  return lines;
}
