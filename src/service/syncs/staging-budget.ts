import { formatBytes } from '../../support/format-bytes.js';
import { recordTooLarge } from '../connectors/wire-limits.js';

/** A cap of staging was reached: the table fails with this message (it names the limit and its setting). */
export class StagingLimitError extends Error {}

/**
 * Bytes a sync has staged on disk, per table and in all, against the caps (LAKE_SYNC_MAX_TABLE_STAGING_BYTES,
 * LAKE_SYNC_MAX_STAGING_BYTES), and the longest record a source may send (LAKE_SYNC_MAX_RECORD_BYTES). Staging
 * files are removed once loaded and released here, so the caps bound the disk a source can fill at once, whatever
 * it sends.
 */
export class StagingBudget {
  private total = 0;
  private readonly perTable = new Map<string, number>();

  constructor(readonly limits: { maxRecordBytes: number; maxTableStagingBytes: number; maxSyncStagingBytes: number }) {}

  /** Counts bytes about to be written for `table`; throws, writing nothing, when a cap would be passed. */
  reserve(table: string, bytes: number): void {
    const tableBytes = (this.perTable.get(table) ?? 0) + bytes;
    if (tableBytes > this.limits.maxTableStagingBytes) {
      throw new StagingLimitError(
        `the table staged more than ${formatBytes(this.limits.maxTableStagingBytes)} at once, the cap per table (LAKE_SYNC_MAX_TABLE_STAGING_BYTES)`,
      );
    }
    if (this.total + bytes > this.limits.maxSyncStagingBytes) {
      throw new StagingLimitError(
        `the sync staged more than ${formatBytes(this.limits.maxSyncStagingBytes)} at once, the cap per sync (LAKE_SYNC_MAX_STAGING_BYTES)`,
      );
    }
    this.perTable.set(table, tableBytes);
    this.total += bytes;
  }

  /** Gives back the bytes of a staged file that was removed. */
  release(table: string, bytes: number): void {
    this.perTable.set(table, Math.max(0, (this.perTable.get(table) ?? 0) - bytes));
    this.total = Math.max(0, this.total - bytes);
  }

  /** Gives back every byte still counted for `table` (a table that failed, its staged files removed). */
  releaseTable(table: string): void {
    this.total = Math.max(0, this.total - (this.perTable.get(table) ?? 0));
    this.perTable.delete(table);
  }

  /** Throws when a record has grown past the longest allowed. */
  checkRecord(bytes: number): void {
    if (bytes > this.limits.maxRecordBytes) {
      throw new StagingLimitError(recordTooLarge(this.limits.maxRecordBytes));
    }
  }
}
