import { join, relative, resolve } from 'node:path';

/**
 * Where lake data lives inside a home. Table snapshots and catalog files sit under lake/<org>/, query results under
 * results/<org>/<query id>/. The metadata store keeps paths relative to the home, so a home can be moved.
 */
export class LakeLayout {
  constructor(readonly homeRoot: string) {}

  tablesDir(organizationId: string): string {
    return join(this.homeRoot, 'lake', organizationId, 'tables');
  }

  snapshotDir(organizationId: string, tableId: string, snapshotId: string): string {
    return join(this.tablesDir(organizationId), tableId, snapshotId);
  }

  /** The organization's DuckLake catalog when the metadata store is SQLite (decision 48). */
  ducklakeFile(organizationId: string): string {
    return join(this.homeRoot, 'lake', organizationId, 'ducklake.sqlite');
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
