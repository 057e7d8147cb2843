import { lstatSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { StoredFile } from './lake-files.js';

/** Every regular file under a folder (none if it does not exist), its path relative to `root`; links not followed. */
export function filesUnder(dir: string, root: string): StoredFile[] {
  const found: StoredFile[] = [];
  const walk = (folder: string): void => {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      // No such folder (yet): nothing kept there.
      return;
    }
    for (const name of names) {
      const path = join(folder, name);
      const stat = lstatSync(path, { throwIfNoEntry: false });
      if (stat?.isDirectory()) walk(path);
      else if (stat?.isFile()) found.push({ path: relative(root, path), size: stat.size, modifiedMs: stat.mtimeMs });
    }
  };
  walk(dir);
  return found;
}
