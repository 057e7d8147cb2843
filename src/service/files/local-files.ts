import { accessSync, constants, rmSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { LakeServiceError } from '../core/errors.js';
import { filesUnder } from './files-under.js';
import type { LakeFiles, Release, StoredFile } from './lake-files.js';

const released: Release = () => undefined;

/** Lake's files in a local (or shared, mounted) directory: the default, with nothing to upload or fetch. */
export class LocalFiles implements LakeFiles {
  readonly kind = 'local';

  constructor(private readonly root: string) {}

  urlOf(path: string): string {
    return path;
  }

  async publish(): Promise<void> {
    // Written in place: already where lake keeps them.
  }

  async hold(paths: readonly string[]): Promise<Release> {
    const missing = paths.filter((path) => !exists(path));
    if (missing.length > 0)
      throw new LakeServiceError(
        'service_unavailable',
        `This server's data directory does not hold ${missing.length} of the files the lake's catalog names (first: ${relative(this.root, missing[0] as string)}). ` +
          'Replicas must share one: set LAKE_DATA_DIR to the directory every replica mounts, or LAKE_DATA_URL to an object store.',
        { retryAfterSeconds: 30 },
      );
    return released;
  }

  async holdIfKept(path: string): Promise<Release | undefined> {
    return exists(path) ? released : undefined;
  }

  async remove(paths: readonly string[]): Promise<void> {
    for (const path of paths) rmSync(path, { force: true });
  }

  async list(dir: string): Promise<StoredFile[]> {
    return filesUnder(dir, this.root);
  }

  async check(): Promise<void> {
    try {
      accessSync(this.root, constants.W_OK);
    } catch (error) {
      throw new LakeServiceError(
        'service_unavailable',
        `This server cannot write to its data directory (${(error as NodeJS.ErrnoException).code ?? 'unknown error'}): check that LAKE_DATA_DIR is mounted and writable by lake.`,
        { retryAfterSeconds: 30 },
      );
    }
  }
}

function exists(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false }) !== undefined;
}
