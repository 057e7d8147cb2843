/**
 * Bounds on what a source can make a sync do: no source holds a worker, a disk or the event loop for ever, and one
 * organization's syncs never keep another's queued.
 */
export interface SyncSettings {
  /** Syncs this process runs at once (LAKE_SYNC_CONCURRENCY). */
  concurrency: number;
  /** Syncs of one organization this process runs at once (LAKE_SYNC_CONCURRENCY_PER_ORG). */
  perOrganization: number;
  /** A source connection that sends nothing for this long is ended (LAKE_SYNC_IDLE_TIMEOUT_SECONDS). */
  idleTimeoutMs: number;
  /** A sync still reading after this long is stopped (LAKE_SYNC_TIMEOUT_SECONDS). */
  maxDurationMs: number;
  /** The longest record (row) a source may send (LAKE_SYNC_MAX_RECORD_BYTES). */
  maxRecordBytes: number;
  /** Bytes one table may have staged on disk at once (LAKE_SYNC_MAX_TABLE_STAGING_BYTES). */
  maxTableStagingBytes: number;
  /** Bytes one sync may have staged on disk at once (LAKE_SYNC_MAX_STAGING_BYTES). */
  maxSyncStagingBytes: number;
  /** Tables discovery keeps of one source (LAKE_SOURCE_MAX_TABLES). */
  maxTables: number;
  /** Columns discovery keeps across a source's tables (LAKE_SOURCE_MAX_COLUMNS). */
  maxColumns: number;
}

const MiB = 1 << 20;
const GiB = 1 << 30;

export const SYNC_DEFAULTS: SyncSettings = {
  concurrency: 4,
  perOrganization: 2,
  // Long enough for a statement that scans a large table before sending anything (the numeric shapes, a max()).
  idleTimeoutMs: 1_800_000,
  maxDurationMs: 24 * 3_600_000,
  maxRecordBytes: 64 * MiB,
  maxTableStagingBytes: 8 * GiB,
  maxSyncStagingBytes: 16 * GiB,
  maxTables: 2_000,
  maxColumns: 20_000,
};

/** The settings from the environment (whole positive numbers, named below); a bad value is an error at start. */
export function syncSettingsFromEnv(env: Record<string, string | undefined>): SyncSettings {
  const read = (name: string, fallback: number, scale = 1): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return Math.round(fallback * scale);
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0)
      throw new Error(`${name} must be a positive number, not '${raw.slice(0, 32)}'.`);
    return Math.max(1, Math.round(value * scale));
  };
  return {
    concurrency: read('LAKE_SYNC_CONCURRENCY', SYNC_DEFAULTS.concurrency),
    perOrganization: read('LAKE_SYNC_CONCURRENCY_PER_ORG', SYNC_DEFAULTS.perOrganization),
    idleTimeoutMs: read('LAKE_SYNC_IDLE_TIMEOUT_SECONDS', SYNC_DEFAULTS.idleTimeoutMs / 1000, 1000),
    maxDurationMs: read('LAKE_SYNC_TIMEOUT_SECONDS', SYNC_DEFAULTS.maxDurationMs / 1000, 1000),
    maxRecordBytes: read('LAKE_SYNC_MAX_RECORD_BYTES', SYNC_DEFAULTS.maxRecordBytes),
    maxTableStagingBytes: read('LAKE_SYNC_MAX_TABLE_STAGING_BYTES', SYNC_DEFAULTS.maxTableStagingBytes),
    maxSyncStagingBytes: read('LAKE_SYNC_MAX_STAGING_BYTES', SYNC_DEFAULTS.maxSyncStagingBytes),
    maxTables: read('LAKE_SOURCE_MAX_TABLES', SYNC_DEFAULTS.maxTables),
    maxColumns: read('LAKE_SOURCE_MAX_COLUMNS', SYNC_DEFAULTS.maxColumns),
  };
}
