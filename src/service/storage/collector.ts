import { existsSync, lstatSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../core/clock.js';
import type { JobStore } from '../jobs/job-store.js';
import { GcStore } from './gc-store.js';
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
  snapshots: number;
  orphaned_folders: number;
  catalog_files: number;
  staging_folders: number;
  bytes_freed: number;
}

/**
 * A folder no snapshot names, or a catalog being built, may belong to a commit still writing it; such files are
 * left alone until they have not changed for this long, whatever the retention window.
 */
const IN_PROGRESS_GRACE_MS = 10 * 60_000;

const CATALOG_FILE = /^v(\d+)(-r[0-9a-f]+)?\.duckdb(\.wal)?$/;
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

const subfolders = (dir: string): string[] => {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    // No such folder yet: nothing to collect there.
    return [];
  }
};

/**
 * Garbage collection of the lake's disk: snapshots no query can read any more (current ones never; older ones once
 * past the retention window and no live query of an earlier catalog version remains, in any process sharing the
 * home), the catalog files of versions nobody reads, folders a killed sync or commit left behind, and staging of
 * syncs that are no longer live. Crash-safe by order: metadata first, files after; whatever a crash leaves is an
 * unreferenced folder the next collection removes.
 */
export class LakeCollector {
  private readonly store: GcStore;

  constructor(
    db: MetadataDb,
    private readonly layout: LakeLayout,
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

    const collected = await this.store.takeCollectable(Math.floor(cutoffMs / 1000));
    // Files a newer (layered) snapshot still reads stay, and so does their folder.
    const referenced = await this.store.referenced();
    for (const snapshot of collected) {
      for (const file of snapshot.files) if (!referenced.files.has(file)) remove(this.layout.toAbsolute(file));
      if (!referenced.directories.has(snapshot.directory)) remove(this.layout.toAbsolute(snapshot.directory));
      report.snapshots++;
    }

    const lakeRoot = join(this.layout.homeRoot, 'lake');
    const named = referenced.directories;
    const settledBefore = Math.min(cutoffMs, now - IN_PROGRESS_GRACE_MS);
    for (const organizationId of subfolders(lakeRoot)) {
      const tablesDir = this.layout.tablesDir(organizationId);
      for (const table of subfolders(tablesDir)) {
        for (const snapshot of subfolders(join(tablesDir, table))) {
          const dir = join(tablesDir, table, snapshot);
          if (named.has(this.layout.toRelative(dir)) || newestChange(dir) > settledBefore) continue;
          remove(dir);
          report.orphaned_folders++;
        }
      }
      report.catalog_files += await this.collectCatalogs(organizationId, cutoffMs, settledBefore, remove);
    }

    const staging = join(this.layout.homeRoot, 'staging');
    for (const syncId of subfolders(staging)) {
      if (await this.store.syncLive(syncId)) continue;
      remove(join(staging, syncId));
      report.staging_folders++;
    }
    return report;
  }

  /** Catalog files of versions older than the current one and than any a live query reads, past the window. */
  private async collectCatalogs(
    organizationId: string,
    cutoffMs: number,
    settledBefore: number,
    remove: (path: string) => void,
  ): Promise<number> {
    const dir = this.layout.catalogDir(organizationId);
    if (!existsSync(dir)) return 0;
    const current = await this.store.currentVersion(organizationId);
    const keepFrom = Math.min(current, (await this.store.oldestLiveVersion(organizationId)) ?? current);
    let removed = 0;
    for (const name of readdirSync(dir)) {
      const version = CATALOG_FILE.exec(name)?.[1];
      const building = BUILD_FILE.test(name);
      const stale = version !== undefined ? Number(version) < keepFrom : building;
      const path = join(dir, name);
      if (!stale || newestChange(path) > (building ? settledBefore : cutoffMs)) continue;
      remove(path);
      if (!name.endsWith('.wal')) removed++;
    }
    return removed;
  }
}
