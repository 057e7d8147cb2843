/** A whole number of at least 1 from an environment variable, or the fallback when unset. */
export function positiveInteger(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number, not '${raw}'.`);
  return value;
}

/** A whole number from `min` to `max` from an environment variable, or the fallback when unset. */
export function wholeNumberSetting(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  max: number,
  min = 0,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max}, not '${raw}'.`);
  return value;
}
