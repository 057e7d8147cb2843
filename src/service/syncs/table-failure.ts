import type { ConnectorSettings } from '../connectors/types.js';
import { isProgrammingError } from '../core/errors.js';
import type { Lake } from '../storage/lake.js';
import { boundedReason } from '../core/bounded-text.js';
import { isDiskFull } from '../../support/disk-full.js';
import { tableFailureReason } from './pg-reads.js';
import type { SyncReporter, TableResult, TableState, TableTask } from './types.js';

/** What a table or a sync that failed on an error of lake's own code says: not the error, which the log has. */
export const INTERNAL_SYNC_FAILURE =
  "lake failed on an error of its own (not the source's doing; the server's log has it, or lake.log in a local lake's home). The next sync tries again; if it fails the same way, report it to whoever runs lake";

/**
 * Why a table failed: `cancelled` once its sync was; for an error of lake's own code, that (reported to the log);
 * else the error without the source's secrets or lake's paths.
 */
export function failureReason(
  error: unknown,
  sync: { signal: AbortSignal; settings: ConnectorSettings; lake: Lake; reportInternal?: (error: Error) => void },
): string {
  if (sync.signal.aborted) return 'cancelled';
  if (isProgrammingError(error)) {
    sync.reportInternal?.(error);
    return INTERNAL_SYNC_FAILURE;
  }
  if (isDiskFull(error)) return DISK_FULL;
  return tableFailureReason(error, sync.settings, sync.lake.layout.homeRoot);
}

/** What a table says when the disk under lake's staging or tables filled while it was written. */
export const DISK_FULL =
  "the disk that holds the lake's staging and tables is full (no space left on device); what was staged for the table is removed and its last snapshot kept: free space there, then sync again";

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
  // Reasons name what the source holds (its columns, its messages): bounded, whatever they say.
  const reason = boundedReason(message);
  reporter.phase(task, 'failed', { error: reason });
  return {
    task,
    rows: 0,
    transferred: 0,
    cursorValue: state?.cursorValue ?? null,
    columns: columns ?? state?.columns ?? [],
    error: reason,
  };
}
