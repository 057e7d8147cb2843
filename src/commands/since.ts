import { usageError } from './exit-codes.js';

/**
 * A time flag (`--since`, `--before`) as epoch seconds: an age (90s, 30m, 2h, 7d), a date or an ISO time
 * (2026-11-24, 2026-11-24T10:00Z), or epoch seconds. Date.parse alone also takes '-1', 'March' or '1 2', which no
 * one means as a time: those are usage errors.
 */
export function sinceSeconds(value: string, flag = '--since'): number {
  const age = /^(\d+)([smhd])$/.exec(value);
  if (age)
    return (
      Math.floor(Date.now() / 1000) -
      Number(age[1]) * { s: 1, m: 60, h: 3600, d: 86_400 }[age[2] as 's' | 'm' | 'h' | 'd']
    );
  if (/^\d+$/.test(value)) return Number(value);
  const parsed = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)
    ? Date.parse(value)
    : Number.NaN;
  if (Number.isNaN(parsed))
    throw usageError(
      `${flag} must be an age (30m, 2h, 7d), a date or time (2026-11-24, 2026-11-24T10:00Z) or epoch seconds, not '${value.slice(0, 40)}'.`,
    );
  return Math.floor(parsed / 1000);
}
