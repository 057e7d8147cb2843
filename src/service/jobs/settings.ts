export interface JobSettings {
  /** How long a job's process may go without renewing its lease before the job counts as lost. */
  leaseMs: number;
  /**
   * How long finished syncs and send runs (with their events) and sources' log entries are kept; 0 keeps them for
   * good. A source synced every minute adds 1,440 syncs a day.
   */
  historyRetentionSeconds?: number;
}

/**
 * LAKE_JOB_LEASE_SECONDS (default 30) sets the lease; the holder renews it every third of that.
 * LAKE_HISTORY_RETENTION_DAYS (default 90; 0: for good) sets how long the record of past syncs and sends is kept.
 */
export function jobSettingsFromEnv(env: Record<string, string | undefined>): JobSettings {
  const raw = env.LAKE_JOB_LEASE_SECONDS;
  const seconds = raw === undefined || raw === '' ? 30 : Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new Error(`LAKE_JOB_LEASE_SECONDS must be a positive number, not '${raw}'.`);
  const rawDays = env.LAKE_HISTORY_RETENTION_DAYS;
  const days = rawDays === undefined || rawDays === '' ? 90 : Number(rawDays);
  if (!Number.isInteger(days) || days < 0 || days > 36_500)
    throw new Error(`LAKE_HISTORY_RETENTION_DAYS must be a whole number of days from 0 to 36500, not '${rawDays}'.`);
  return { leaseMs: seconds * 1000, historyRetentionSeconds: days * 86_400 };
}
