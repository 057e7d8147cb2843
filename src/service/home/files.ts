import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { makePrivateFolder } from '../../support/private-folder.js';

const PRIVATE_FILE = 0o600;

function tempPathBeside(file: string): string {
  return join(dirname(file), `.${randomBytes(6).toString('hex')}.tmp`);
}

/** The home's folders: 0700, made one level at a time (makePrivateFolder says why), failing with what to change. */
export function ensurePrivateDir(dir: string): void {
  makePrivateFolder(dir, '--home or LAKE_HOME');
}

/**
 * Files only a lake home holds (a home on PostgreSQL metadata has no metadata.sqlite, but its secrets.key): a folder
 * without one is not tightened, whatever it is (`--home /` or `/tmp`).
 */
const HOME_MARKERS = ['metadata.sqlite', 'owner.token', 'signing.key', 'secrets.key'];

/**
 * Makes a home private to its user: every folder 0700 and file 0600 beneath `root` (symbolic links are left as
 * they are), when `root` itself is open to others and holds a lake's own files. A home made by an older lake had
 * 0755 folders and 0644 files: its metadata, catalogs and Parquet files readable by every user of the machine. A
 * folder that is not yet a lake home (an existing folder someone names with --home) is left as it is: walking it
 * would change the modes of files that are not lake's (all of a machine's, for `--home /`).
 */
export function tightenHome(root: string): boolean {
  if ((lstatSync(root).mode & 0o077) === 0) return false;
  if (!HOME_MARKERS.some((name) => existsSync(join(root, name)))) return false;
  const walk = (path: string): void => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    if (stat.isDirectory()) {
      chmodSync(path, 0o700);
      for (const entry of readdirSync(path)) walk(join(path, entry));
    } else if ((stat.mode & 0o077) !== 0) chmodSync(path, PRIVATE_FILE);
  };
  walk(root);
  return true;
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
