import type { DuckLakeCatalog } from './ducklake/catalog.js';
import type { CatalogState } from './ducklake/catalog-state.js';
import type { LakeCatalogs } from './ducklake/lake-catalogs.js';

/** Snapshots whose state stays in memory: each organization's newest few, for the sessions being built. */
const KEPT_STATES = 32;

/**
 * Each organization's catalog state at a snapshot. A snapshot never changes once committed, so its state is read
 * once and kept (the few newest): a query then costs one lookup of the current snapshot id, as the catalog version
 * did before DuckLake.
 */
export class CatalogStates {
  private readonly kept = new Map<string, Promise<CatalogState>>();

  constructor(private readonly catalogs: LakeCatalogs) {}

  catalog(organizationId: string): Promise<DuckLakeCatalog> {
    return this.catalogs.for(organizationId);
  }

  async current(organizationId: string): Promise<CatalogState> {
    const catalog = await this.catalog(organizationId);
    return this.at(organizationId, await catalog.currentSnapshot());
  }

  async at(organizationId: string, snapshot: number): Promise<CatalogState> {
    const key = `${organizationId}:${snapshot}`;
    let state = this.kept.get(key);
    if (state) {
      // Most recently used last.
      this.kept.delete(key);
      this.kept.set(key, state);
      return state;
    }
    state = this.catalog(organizationId).then((catalog) => catalog.stateAt(snapshot));
    state.catch(() => this.kept.delete(key));
    this.kept.set(key, state);
    for (const oldest of this.kept.keys()) {
      if (this.kept.size <= KEPT_STATES) break;
      this.kept.delete(oldest);
    }
    return state;
  }
}
