import type { MetadataDb } from '../store/metadata-db.js';

/** What the collector asks the metadata store about work in flight; the catalogs and files are its business. */
export class GcStore {
  constructor(private readonly db: MetadataDb) {}

  /** The oldest catalog version (DuckLake snapshot) a live query of the organization reads, if any. */
  async oldestLiveVersion(organizationId: string): Promise<number | undefined> {
    const row = await this.db.get<{ version: number | null }>(
      `SELECT min(q.catalog_version) AS version FROM queries q JOIN jobs j ON j.id = q.id
         WHERE j.organization_id = ? AND j.kind = 'query' AND j.status IN ('queued', 'running') AND q.catalog_version IS NOT NULL`,
      [organizationId],
    );
    return row?.version === null || row?.version === undefined ? undefined : Number(row.version);
  }

  /** The session catalog files (as plans name them, relative to the home) the organization's live queries read. */
  async liveCatalogFiles(organizationId: string): Promise<Set<string>> {
    const rows = await this.db.all<{ plan: string | null }>(
      `SELECT q.plan FROM queries q JOIN jobs j ON j.id = q.id
         WHERE j.organization_id = ? AND j.kind = 'query' AND j.status IN ('queued', 'running')`,
      [organizationId],
    );
    const files = new Set<string>();
    for (const { plan } of rows) {
      const file = plan ? (JSON.parse(plan) as { catalogFile?: unknown }).catalogFile : undefined;
      if (typeof file === 'string') files.add(file);
    }
    return files;
  }

  /** Every organization: each has a lake, whether or not this host holds any of its files. */
  async organizationIds(): Promise<string[]> {
    return (await this.db.all<{ id: string }>('SELECT id FROM organizations ORDER BY id')).map((row) => row.id);
  }

  /** Which of these query ids are still recorded. */
  async existingQueries(ids: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let i = 0; i < ids.length; i += 500) {
      const batch = ids.slice(i, i + 500);
      const rows = await this.db.all<{ id: string }>(
        `SELECT id FROM queries WHERE id IN (${batch.map(() => '?').join(', ')})`,
        batch,
      );
      for (const row of rows) found.add(row.id);
    }
    return found;
  }

  /** Whether the sync is queued or running (its staging folder is in use). */
  async syncLive(syncId: string): Promise<boolean> {
    return (
      (await this.db.get(`SELECT 1 FROM jobs WHERE id = ? AND status IN ('queued', 'running')`, [syncId])) !== undefined
    );
  }
}
