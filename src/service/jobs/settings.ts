export interface JobSettings {
  /** How long a job's process may go without renewing its lease before the job counts as lost. */
  leaseMs: number;
}

/** LAKE_JOB_LEASE_SECONDS (default 30) sets the lease; the holder renews it every third of that. */
export function jobSettingsFromEnv(env: Record<string, string | undefined>): JobSettings {
  const raw = env.LAKE_JOB_LEASE_SECONDS;
  const seconds = raw === undefined || raw === '' ? 30 : Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new Error(`LAKE_JOB_LEASE_SECONDS must be a positive number, not '${raw}'.`);
  return { leaseMs: seconds * 1000 };
}
