import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { FileCache } from './file-cache.js';
import type { LakeFiles, Release, StoredFile } from './lake-files.js';
import type { ObjectStoreSettings } from './object-store-settings.js';
import { MissingObject, S3Objects } from './s3-objects.js';

/** How long a reachable store is believed to stay so, for readiness. */
const CHECK_TRUSTED_MS = 5_000;

/** Transfers at once to or from the store, per call. */
const PARALLEL_TRANSFERS = 4;

/** Files under the data root that are copies of stored ones: tables' data and delete files, and results. */
export const isStoredPath = (relativePath: string): boolean =>
  /^lake\/[^/]+\/tables\//.test(relativePath) || relativePath.startsWith('results/');

/**
 * Lake's files in an S3-compatible bucket, under the same paths as in a local data root, read through a bounded
 * local cache at that root: DuckDB reads local files only (its httpfs extension cannot load here), and a warm cache
 * reads at local speed. A file written here stays as its cached copy once published.
 */
export class ObjectStoreFiles implements LakeFiles {
  readonly kind = 'object_store';
  readonly cache: FileCache;
  private readonly objects: S3Objects;
  private checkedAt = 0;
  /** Downloads in flight: concurrent readers of one file share one. */
  private readonly fetching = new Map<string, Promise<void>>();

  constructor(
    private readonly root: string,
    store: ObjectStoreSettings,
    /** LAKE_CACHE_MB in bytes: what the copies under `root` may take. */
    cacheMaxBytes: number,
  ) {
    this.objects = new S3Objects(store);
    this.cache = new FileCache(cacheMaxBytes, root, isStoredPath);
  }

  private key(path: string): string {
    const key = relative(this.root, path).split(sep).join('/');
    if (key.startsWith('..') || key === '') throw new Error(`${path} is not under the lake's data root.`);
    return key;
  }

  urlOf(path: string): string {
    return this.objects.url(this.key(path));
  }

  async publish(paths: readonly string[]): Promise<void> {
    await inParallel(paths, async (path) => {
      await this.objects.put(this.key(path), path);
      this.cache.add(path, statSync(path).size);
    });
    this.cache.evict();
  }

  async hold(paths: readonly string[], sizes?: ReadonlyMap<string, number>): Promise<Release> {
    const unique = [...new Set(paths)];
    const held: string[] = [];
    const release: Release = () => {
      for (const path of held.splice(0)) this.cache.release(path);
    };
    try {
      await inParallel(unique, async (path) => {
        await this.ensureLocal(path, sizes?.get(path));
        this.cache.hold(path);
        held.push(path);
      });
    } catch (error) {
      release();
      throw error;
    }
    this.cache.evict();
    return release;
  }

  async holdIfKept(path: string): Promise<Release | undefined> {
    try {
      return await this.hold([path]);
    } catch (error) {
      if (error instanceof MissingObject) return undefined;
      throw error;
    }
  }

  private async ensureLocal(path: string, size?: number): Promise<void> {
    const onDisk = statSync(path, { throwIfNoEntry: false });
    if (onDisk) {
      // A copy from before this process, or one written here: known to the cache from now on.
      if (!this.cache.has(path)) this.cache.add(path, onDisk.size);
      return;
    }
    let download = this.fetching.get(path);
    if (!download) {
      download = this.fetch(path, size).finally(() => this.fetching.delete(path));
      this.fetching.set(path, download);
    }
    await download;
  }

  private async fetch(path: string, expectedSize?: number): Promise<void> {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // Downloaded beside its place and renamed there whole: a reader never sees part of a file.
    const temp = join(dirname(path), `.${randomBytes(6).toString('hex')}.download`);
    try {
      const size = await this.objects.get(this.key(path), temp, expectedSize);
      renameSync(temp, path);
      this.cache.add(path, size);
    } finally {
      rmSync(temp, { force: true });
    }
  }

  async remove(paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    await this.objects.remove(paths.map((path) => this.key(path)));
    for (const path of paths) {
      this.cache.drop(path);
      rmSync(path, { force: true });
    }
  }

  async list(dir: string): Promise<StoredFile[]> {
    const objects = await this.objects.list(`${this.key(dir)}/`);
    return objects.map((o) => ({ path: o.key, size: o.size, modifiedMs: o.modifiedMs }));
  }

  /** Reachable, and the bucket there; a success is trusted for a few seconds (readiness is probed often). */
  async check(): Promise<void> {
    if (Date.now() - this.checkedAt < CHECK_TRUSTED_MS) return;
    await this.objects.check();
    this.checkedAt = Date.now();
  }
}

/** Runs `work` on every item, a few at a time; the first failure fails the whole after the others settle. */
async function inParallel<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown;
  const lane = async (): Promise<void> => {
    while (next < items.length && failure === undefined) {
      const item = items[next++] as T;
      await work(item).catch((error: unknown) => {
        failure ??= error;
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_TRANSFERS, items.length) }, lane));
  if (failure !== undefined) throw failure;
}
