import type { ConnectorSettings } from '../connectors/types.js';
import type { Lake } from '../storage/lake.js';
import { tableFailureReason } from './pg-reads.js';
import type { SyncReporter, TableResult, TableState, TableTask } from './types.js';

/** Why a table failed: `cancelled` once its sync was, else the error without the source's secrets or lake's paths. */
export function failureReason(
  error: unknown,
  sync: { signal: AbortSignal; settings: ConnectorSettings; lake: Lake },
): string {
  return sync.signal.aborted ? 'cancelled' : tableFailureReason(error, sync.settings, sync.lake.layout.homeRoot);
}

/**
 * A table that failed, reported with its reason (already free of hosts, users and passwords): it keeps the cursor of
 * its last sync, so the next one reads from there, and the columns given, else those its last sync saw.
 */
export function failedTable(
  reporter: SyncReporter,
  task: TableTask,
  message: string,
  state: TableState | undefined,
  columns?: { name: string; type: string }[],
): TableResult {
  reporter.phase(task, 'failed', { error: message });
  return {
    task,
    rows: 0,
    transferred: 0,
    cursorValue: state?.cursorValue ?? null,
    columns: columns ?? state?.columns ?? [],
    error: message,
  };
}
