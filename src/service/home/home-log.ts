import { appendFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Past this size the log is moved to `lake.log.1` (the one before it dropped): a home's log never grows unbounded. */
const MAX_LOG_BYTES = 5 * 1024 * 1024;

/** The levels local mode keeps: what went wrong, not each request. */
const KEPT_LEVELS = new Set(['warn', 'error']);

/**
 * The log of a lake that runs inside the CLI (local mode): the warnings and errors `lake serve` would print on
 * standard output, as the same JSON lines, appended to `<home>/lake.log` (0600). Without it, a local command that
 * failed on something unexpected said only "quote the request id to the operator", and the operator (its user)
 * had nowhere to look it up. A line that cannot be written is dropped: the log never fails a command.
 */
export function homeLog(root: string): { file: string; log: (line: object) => void } {
  const file = join(root, 'lake.log');
  const log = (line: object): void => {
    const level = (line as { level?: unknown }).level;
    if (typeof level !== 'string' || !KEPT_LEVELS.has(level)) return;
    try {
      if (sizeOf(file) > MAX_LOG_BYTES) renameSync(file, `${file}.1`);
      appendFileSync(file, `${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`, { mode: 0o600 });
    } catch {
      // A full disk or a read-only home: the command's own answer matters more than its log line.
    }
  };
  return { file, log };
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
