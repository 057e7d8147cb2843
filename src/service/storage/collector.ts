import { existsSync, lstatSync, readdirSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import type { Clock } from '../core/clock.js';
import type { JobStore } from '../jobs/job-store.js';
import { GcStore } from './gc-store.js';
import type { LakeCatalogs } from './ducklake/lake-catalogs.js';
import { expireSnapshots, takeScheduledFiles } from './ducklake/expire.js';
import type { LakeLayout } from './layout.js';
import type { MetadataDb } from '../store/metadata-db.js';

export interface GcSettings {
  /** Old snapshots (and catalog files) are kept at least this long after they stopped being current. */
  retentionSeconds: number;
  /** How often `lake serve` collects. */
  intervalMs: number;
}

export function gcSettingsFromEnv(env: Record<string, string | undefined>): GcSettings {
  const minutes = (name: string, fallback: number, least: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < least)
      throw new Error(`${name} must be a whole number of minutes of at least ${least}, not '${raw}'.`);
    return value;
  };
  return {
    retentionSeconds: minutes('LAKE_SNAPSHOT_RETENTION_MINUTES', 60, 0) * 60,
    intervalMs: minutes('LAKE_GC_INTERVAL_MINUTES', 10, 1) * 60_000,
  };
}

export interface GcReport {
  object: 'lake_collection';
  /** DuckLake snapshots expired. */
  snapshots: number;
  /** Files and folders no snapshot names (left by a killed write), removed. */
  orphaned_folders: number;
  catalog_files: number;
  staging_folders: number;
  bytes_freed: number;
}

/**
 * A file or folder no snapshot names, or a catalog being built, may belong to a commit still writing it; such files
 * are left alone until they have not changed for this long, whatever the retention window.
 */
const IN_PROGRESS_GRACE_MS = 10 * 60_000;

/** A session catalog: `s<snapshot>` now, `v<version>` as releases before DuckLake named them. */
const CATALOG_FILE = /^([sv])(\d+)(-r[0-9a-f]+)?\.duckdb(\.wal)?$/;
const BUILD_FILE = /^\.build-[0-9a-f]+\.duckdb(\.wal)?$/;

/** Bytes under a path (a file, or a folder and everything in it); 0 once gone. */
function sizeOf(path: string): number {
  try {
    const stat = lstatSync(path);
    if (!stat.isDirectory()) return stat.size;
    return readdirSync(path).reduce((sum, entry) => sum + sizeOf(join(path, entry)), 0);
  } catch {
    // Removed meanwhile (another collector, a retention pass): it takes no space.
    return 0;
  }
}

/** The newest modification time (ms) of a file, or of a folder and its entries: one still being written looks young. */
function newestChange(path: string): number {
  try {
    const stat = statSync(path);
    if (!stat.isDirectory()) return stat.mtimeMs;
    return Math.max(stat.mtimeMs, ...readdirSync(path).map((entry) => statSync(join(path, entry)).mtimeMs));
  } catch {
    // Cannot be read now: treated as just written, so it is kept rather than removed by mistake.
    return Number.POSITIVE_INFINITY;
  }
}

const entries = (dir: string): { name: string; folder: boolean }[] => {
  try {
    return readdirSync(dir, { withFileTypes: true }).map((e) => ({ name: e.name, folder: e.isDirectory() }));
  } catch {
    // No such folder yet: nothing to collect there.
    return [];
  }
};
const subfolders = (dir: string): string[] =>
  entries(dir)
    .filter((e) => e.folder)
    .map((e) => e.name);

/**
 * Garbage collection of the lake's disk, the DuckLake way: each organization's snapshots older than the retention
 * window expire (never the current one, nor one a live query of any process reads), the files only they read are
 * scheduled for deletion and removed, and so are files no snapshot names (a killed write's), session catalogs of
 * snapshots nobody reads, and staging of syncs that are no longer live. Crash-safe by order: catalog rows first,
 * files after; whatever a crash leaves is a file no row names, which the next collection removes.
 */
export class LakeCollector {
  private readonly store: GcStore;

  constructor(
    db: MetadataDb,
    private readonly layout: LakeLayout,
    private readonly catalogs: LakeCatalogs,
    private readonly jobs: JobStore,
    private readonly clock: Clock,
    readonly settings: GcSettings,
  ) {
    this.store = new GcStore(db);
  }

  async collect(): Promise<GcReport> {
    // Queries of processes that died must not pin old snapshots for ever.
    await this.jobs.expireLeases();
    const now = this.clock.now();
    const cutoffMs = now - this.settings.retentionSeconds * 1000;
    const report: GcReport = {
      object: 'lake_collection',
      snapshots: 0,
      orphaned_folders: 0,
      catalog_files: 0,
      staging_folders: 0,
      bytes_freed: 0,
    };
    const remove = (path: string): void => {
      report.bytes_freed += sizeOf(path);
      rmSync(path, { recursive: true, force: true });
    };
    const settledBefore = Math.min(cutoffMs, now - IN_PROGRESS_GRACE_MS);
    const organizations = new Set([
      ...subfolders(join(this.layout.homeRoot, 'lake')),
      ...(this.layout.files.kind === 'object_store' ? await this.store.organizationIds() : []),
    ]);
    for (const organizationId of organizations) {
      // Only folders lake made: an organization id is lower-case letters, digits and `_`.
      if (!/^[a-z0-9_]+$/.test(organizationId)) continue;
      const catalog = await this.catalogs.for(organizationId);
      const oldestLive = await this.store.oldestLiveVersion(organizationId);
      report.snapshots += await expireSnapshots(catalog, catalog.store, {
        olderThan: new Date(cutoffMs),
        now: new Date(now),
        ...(oldestLive !== undefined ? { oldestLiveSnapshot: oldestLive } : {}),
      });
      const tablesDir = this.layout.tablesDir(organizationId);
      const scheduled = (await takeScheduledFiles(catalog, catalog.store, new Date(now))).map((path) =>
        join(tablesDir, path),
      );
      if (this.layout.files.kind === 'object_store') {
        report.bytes_freed += (await this.layout.files.list(tablesDir))
          .filter((file) => scheduled.includes(this.layout.toAbsolute(file.path)))
          .reduce((sum, file) => sum + file.size, 0);
        await this.layout.files.remove(scheduled);
      }
      for (const path of scheduled) {
        remove(path);
        removeIfEmpty(dirname(path));
      }
      const named = await catalog.namedFiles();
      report.orphaned_folders += this.sweepUnnamed(tablesDir, named, settledBefore, remove);
      if (this.layout.files.kind === 'object_store') {
        report.orphaned_folders += await this.sweepUnnamedObjects(tablesDir, named, settledBefore, report);
        report.orphaned_folders += await this.sweepResultObjects(organizationId, settledBefore, report);
      }
      const keepFrom = Math.min(await catalog.currentSnapshot(), oldestLive ?? Number.POSITIVE_INFINITY);
      const live = new Set(
        [...(await this.store.liveCatalogFiles(organizationId))].map((file) => basename(this.layout.toAbsolute(file))),
      );
      report.catalog_files += this.collectCatalogs(organizationId, keepFrom, live, cutoffMs, settledBefore, remove);
    }

    const staging = join(this.layout.homeRoot, 'staging');
    for (const syncId of subfolders(staging)) {
      if (await this.store.syncLive(syncId)) continue;
      remove(join(staging, syncId));
      report.staging_folders++;
    }
    return report;
  }

  /**
   * Files under the data path that no catalog row names (paths relative to it), once settled: a killed write's
   * parts, a table's folder whose files all went. Returns how many files and folders went.
   */
  private sweepUnnamed(
    tablesDir: string,
    named: ReadonlySet<string>,
    settledBefore: number,
    remove: (path: string) => void,
  ): number {
    const namedFolders = new Set([...named].flatMap((path) => ancestors(path)));
    let removed = 0;
    const visit = (relativeDir: string): void => {
      for (const entry of entries(join(tablesDir, relativeDir))) {
        const path = relativeDir === '' ? entry.name : `${relativeDir}/${entry.name}`;
        if (entry.folder && namedFolders.has(path)) {
          visit(path);
          continue;
        }
        if (named.has(path) || newestChange(join(tablesDir, path)) > settledBefore) continue;
        remove(join(tablesDir, path));
        removed++;
      }
    };
    visit('');
    return removed;
  }

  /**
   * Objects under the tables' folder that no catalog row names, once settled: a killed sync's uploaded parts, found
   * by listing the prefix (the store is where they are; this host may never have held them).
   */
  private async sweepUnnamedObjects(
    tablesDir: string,
    named: ReadonlySet<string>,
    settledBefore: number,
    report: GcReport,
  ): Promise<number> {
    const unnamed = (await this.layout.files.list(tablesDir)).filter((file) => {
      const path = this.layout.toAbsolute(file.path);
      return !named.has(relative(tablesDir, path)) && file.modifiedMs <= settledBefore;
    });
    await this.layout.files.remove(unnamed.map((file) => this.layout.toAbsolute(file.path)));
    report.bytes_freed += unnamed.reduce((sum, file) => sum + file.size, 0);
    return unnamed.length;
  }

  /**
   * Results in the object store whose query is no longer recorded (purged while the store could not be reached, or
   * a process killed between upload and record), once settled.
   */
  private async sweepResultObjects(organizationId: string, settledBefore: number, report: GcReport): Promise<number> {
    const kept = await this.layout.files.list(this.layout.resultsDir(organizationId));
    const queryOf = (path: string): string => path.split('/')[2] ?? '';
    const known = await this.store.existingQueries([...new Set(kept.map((file) => queryOf(file.path)))]);
    const stale = kept.filter((file) => !known.has(queryOf(file.path)) && file.modifiedMs <= settledBefore);
    await this.layout.files.remove(stale.map((file) => this.layout.toAbsolute(file.path)));
    report.bytes_freed += stale.reduce((sum, file) => sum + file.size, 0);
    return stale.length;
  }

  /**
   * Session catalogs of snapshots older than the current one and than any a live query reads, past the window; and
   * variants of any snapshot (`-r…`: a restricted caller's tables, the versions a query reads AT) that no live query
   * reads and nobody used for the window. A caller makes a variant per set of versions it names, so without the
   * second rule an organization that commits nothing kept every one, and a caller could fill the disk with them.
   */
  private collectCatalogs(
    organizationId: string,
    keepFrom: number,
    live: ReadonlySet<string>,
    cutoffMs: number,
    settledBefore: number,
    remove: (path: string) => void,
  ): number {
    const dir = this.layout.catalogDir(organizationId);
    if (!existsSync(dir)) return 0;
    let removed = 0;
    for (const name of readdirSync(dir)) {
      const found = CATALOG_FILE.exec(name);
      const building = BUILD_FILE.test(name);
      // A `v` file names a version of the catalog before DuckLake, which no session starts from any more.
      const variant = found?.[3] !== undefined && !live.has(name.replace(/\.wal$/, ''));
      const stale = found ? found[1] === 'v' || Number(found[2]) < keepFrom || variant : building;
      const path = join(dir, name);
      if (!stale || newestChange(path) > (building ? settledBefore : cutoffMs)) continue;
      remove(path);
      if (!name.endsWith('.wal')) removed++;
    }
    return removed;
  }
}

/** A version's folder once its last file went: nothing else will ever be written there. */
function removeIfEmpty(folder: string): void {
  try {
    if (readdirSync(folder).length === 0) rmdirSync(folder);
  } catch {
    // Gone already, or written meanwhile: the sweep of unnamed files decides later.
  }
}

/** The folders a relative path lies in: `a/b/c.parquet` is in `a` and `a/b`. */
function ancestors(path: string): string[] {
  const parts = path.split('/');
  return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join('/'));
}
