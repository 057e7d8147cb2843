/** A file lake keeps, as the object store knows it: its path relative to the data root, size and last change. */
export interface StoredFile {
  path: string;
  size: number;
  modifiedMs: number;
}

/** Gives up the hold on files read: they may be evicted from the local cache again. */
export type Release = () => void;

/**
 * The one seam for everything lake keeps as files (DuckLake data and delete files, query results and their other
 * forms): a local directory, or an S3-compatible object store read through a bounded local cache. Paths are
 * absolute paths under the data root, where DuckDB reads and writes; the store keeps each under its path relative
 * to that root.
 */
export interface LakeFiles {
  readonly kind: 'local' | 'object_store';
  /** The folder (local) or URL (object store) another engine reads a path under the data root at. */
  urlOf(path: string): string;
  /**
   * Makes files written under the data root durable where lake keeps them, before a commit names them: uploaded
   * (multipart when large) to the object store; nothing to do locally. A failed upload throws, so nothing names it.
   */
  publish(paths: readonly string[]): Promise<void>;
  /**
   * Makes files readable on local disk and keeps them there until the release: fetched once into the cache (checked
   * against the size `sizes` records for them, else the store's, and their checksum) and never evicted while held. Locally, checks they are there: a server whose
   * data directory lacks the files the catalog names answers 503 saying what to fix, not a failed query.
   */
  hold(paths: readonly string[], sizes?: ReadonlyMap<string, number>): Promise<Release>;
  /** As hold, for one file that may not have been kept at all: undefined then (a result's form not made yet). */
  holdIfKept(path: string): Promise<Release | undefined>;
  /** Removes files wherever lake keeps them (the store and the local copy). */
  remove(paths: readonly string[]): Promise<void>;
  /** Every file kept under a folder of the data root (for the collector's sweep of files no snapshot names). */
  list(dir: string): Promise<StoredFile[]>;
  /** Writable and reachable (readiness): throws when not. */
  check(): Promise<void>;
}
