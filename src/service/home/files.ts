import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const PRIVATE_FILE = 0o600;

function tempPathBeside(file: string): string {
  return join(dirname(file), `.${randomBytes(6).toString('hex')}.tmp`);
}

export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Replaces a private file atomically: readers see the old content or the new, never a partial write. */
export function writePrivateFile(file: string, content: string): void {
  const temp = tempPathBeside(file);
  writeFileSync(temp, content, { mode: PRIVATE_FILE });
  chmodSync(temp, PRIVATE_FILE);
  renameSync(temp, file);
}

/**
 * Returns the file's content, creating it with make() if it does not exist. Creation publishes a complete file
 * with link(), which fails if another process got there first; then that process's content wins.
 */
export function readOrCreatePrivateFile(file: string, make: () => string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const temp = tempPathBeside(file);
  writeFileSync(temp, make(), { mode: PRIVATE_FILE });
  try {
    linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temp);
  }
  return readFileSync(file, 'utf8');
}

export function readFileIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
