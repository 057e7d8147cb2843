import { join, relative, resolve } from 'node:path';
import type { LakeFiles } from '../files/lake-files.js';
import { LocalFiles } from '../files/local-files.js';

/**
 * Where lake data lives inside a home. Table snapshots and catalog files sit under lake/<org>/, query results under
 * results/<org>/<query id>/. The metadata store keeps paths relative to the home, so a home can be moved.
 */
export class LakeLayout {
  constructor(
    readonly homeRoot: string,
    /** Where the tables' files and results are kept: this folder, or an object store cached in it. */
    readonly files: LakeFiles = new LocalFiles(homeRoot),
    /** Where SQLite DuckLake catalogs live: beside the tables, or in the home when the tables' folder is a cache. */
    private readonly catalogRoot: string = homeRoot,
  ) {}

  tablesDir(organizationId: string): string {
    return join(this.homeRoot, 'lake', organizationId, 'tables');
  }

  snapshotDir(organizationId: string, tableId: string, snapshotId: string): string {
    return join(this.tablesDir(organizationId), tableId, snapshotId);
  }

  /** The organization's DuckLake catalog when the metadata store is SQLite (decision 48). */
  ducklakeFile(organizationId: string): string {
    return join(this.catalogRoot, 'lake', organizationId, 'ducklake.sqlite');
  }

  catalogDir(organizationId: string): string {
    return join(this.homeRoot, 'lake', organizationId, 'catalogs');
  }

  catalogFile(organizationId: string, version: number): string {
    return join(this.catalogDir(organizationId), `v${version}.duckdb`);
  }

  resultsDir(organizationId: string): string {
    return join(this.homeRoot, 'results', organizationId);
  }

  resultDir(organizationId: string, queryId: string): string {
    return join(this.resultsDir(organizationId), queryId);
  }

  toRelative(path: string): string {
    return relative(this.homeRoot, path);
  }

  toAbsolute(path: string): string {
    return resolve(this.homeRoot, path);
  }
}
