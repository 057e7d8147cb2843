/**
 * `LAKE_DEBUG_TIMING=1` prints, on stderr, when each step of a command's critical path ends, in milliseconds since
 * the process started: how docs/performance.md accounts for a query's time. Off, a mark costs one comparison.
 */
const enabled = process.env.LAKE_DEBUG_TIMING === '1';

export function mark(step: string): void {
  if (enabled) process.stderr.write(`lake timing ${performance.now().toFixed(1).padStart(7)} ms  ${step}\n`);
}
