import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p` with 0700 folders, one level at a time. Not Node's recursive mkdir: under /proc it never returns (mkdir
 * there answers ENOENT for a folder whose parent exists, which Node's recursion takes for a missing parent, again and
 * again), and the folders made here start from paths people type (--home, LAKE_HOME, LAKE_CONFIG_DIR). Fails with the
 * first folder that cannot be made, naming `setting`, which chose the place.
 */
export function makePrivateFolder(dir: string, setting: string): void {
  const missing: string[] = [];
  for (let path = resolve(dir); ; path = dirname(path)) {
    if (existsSync(path)) {
      // A file where a folder is wanted (--home naming a file): said here, not at the first file opened in it.
      if (!statSync(path).isDirectory()) throw new FolderUnusable(resolve(dir), path, 'ENOTDIR', setting);
      break;
    }
    missing.push(path);
    if (dirname(path) === path) break;
  }
  for (const folder of missing.reverse()) {
    try {
      mkdirSync(folder, { mode: 0o700 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Made meanwhile by another process (two commands starting on a new home): what was wanted is there.
      if (code === 'EEXIST') continue;
      throw new FolderUnusable(resolve(dir), folder, code, setting);
    }
  }
}

const WHY: Record<string, string> = {
  ENOENT: 'the file system there makes no folders',
  EACCES: 'permission denied',
  EPERM: 'not permitted',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'a file is in the way',
  ENOSPC: 'the disk is full',
};

/** A folder lake needs (a home, its data, the profiles' folder) that cannot be made where it was asked for. */
export class FolderUnusable extends Error {
  constructor(
    readonly path: string,
    failedAt: string,
    code: string | undefined,
    /** The flag or variable that chose the place, for the person to change. */
    readonly setting: string,
  ) {
    super(`Cannot make the folder ${path}: making ${failedAt} failed (${WHY[code ?? ''] ?? code ?? 'unknown error'}).`);
    this.name = 'FolderUnusable';
  }
}
