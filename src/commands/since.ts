import { usageError } from './exit-codes.js';

/** `--since`: a time (2026-11-01T00:00Z) or an age (30m, 2h, 7d), as epoch seconds. */
export function parseSince(text: string): number {
  const relative = /^(\d+)([smhd])$/.exec(text);
  if (relative)
    return (
      Math.floor(Date.now() / 1000) -
      Number(relative[1]) * { s: 1, m: 60, h: 3600, d: 86_400 }[relative[2] as 's' | 'm' | 'h' | 'd']
    );
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed))
    throw usageError(`--since takes a time (2026-11-01T00:00Z) or an age (30m, 2h, 7d), not '${text}'.`);
  return Math.floor(parsed / 1000);
}
