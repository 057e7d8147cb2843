import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A private temporary folder (0700, in TMPDIR) that is removed when `remove` is called and, failing that, when the
 * process exits: a command that ends early (its reader closed the pipe, ^C) exits through process.exit, past any
 * `finally`, and would otherwise leave what it downloaded behind.
 */
export function temporaryFolder(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const removeNow = (): void => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeNow);
  return {
    dir,
    remove() {
      process.removeListener('exit', removeNow);
      removeNow();
    },
  };
}
