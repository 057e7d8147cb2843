import { dirname } from 'node:path';
import { lock, type MetadataDb } from '../store/metadata-db.js';

export interface CollectableSnapshot {
  id: string;
  organizationId: string;
  directory: string;
  /** Every file it read: a layered snapshot's include files of earlier snapshots, which later ones may still read. */
  files: string[];
}

/** What the collector reads and removes in the metadata store; the files are the collector's business. */
export class GcStore {
  constructor(private readonly db: MetadataDb) {}

  /**
   * Removes, in one transaction, every snapshot no query can read any more, and returns them: not current,
   * superseded at or before `supersededBefore`, and superseded at a catalog version no live (queued or running)
   * query of its organization still reads. Rows go first; a crash before their folders are deleted leaves only
   * folders no row names, which the next collection removes.
   */
  async takeCollectable(supersededBefore: number): Promise<CollectableSnapshot[]> {
    return this.db.transaction(lock.collector(), async () => {
      const rows = await this.db.all<Omit<CollectableSnapshot, 'files'> & { files: string }>(
        `SELECT s.id, t.organization_id AS organizationId, s.directory, s.files
           FROM lake_snapshots s JOIN lake_tables t ON t.id = s.table_id
           WHERE s.superseded_at IS NOT NULL AND s.superseded_at <= ?
             AND (t.current_snapshot_id IS NULL OR t.current_snapshot_id <> s.id)
             AND NOT EXISTS (
               SELECT 1 FROM queries q JOIN jobs j ON j.id = q.id
               WHERE j.organization_id = t.organization_id AND j.kind = 'query' AND j.status IN ('queued', 'running')
                 AND q.catalog_version IS NOT NULL AND q.catalog_version < s.superseded_version)`,
        [supersededBefore],
      );
      for (const row of rows) await this.db.run('DELETE FROM lake_snapshots WHERE id = ?', [row.id]);
      return rows.map((row) => ({ ...row, files: JSON.parse(row.files) as string[] }));
    });
  }

  /** The oldest catalog version a live query of the organization reads, if any. */
  async oldestLiveVersion(organizationId: string): Promise<number | undefined> {
    const row = await this.db.get<{ version: number | null }>(
      `SELECT min(q.catalog_version) AS version FROM queries q JOIN jobs j ON j.id = q.id
         WHERE j.organization_id = ? AND j.kind = 'query' AND j.status IN ('queued', 'running') AND q.catalog_version IS NOT NULL`,
      [organizationId],
    );
    return row?.version ?? undefined;
  }

  async currentVersion(organizationId: string): Promise<number> {
    const row = await this.db.get<{ version: number }>(
      'SELECT version FROM lake_catalog_versions WHERE organization_id = ?',
      [organizationId],
    );
    return row?.version ?? 0;
  }

  /** Every file the remaining snapshots read, and every folder they own or read from (relative to the home). */
  async referenced(): Promise<{ files: Set<string>; directories: Set<string> }> {
    const rows = await this.db.all<{ directory: string; files: string }>('SELECT directory, files FROM lake_snapshots');
    const files = new Set(rows.flatMap((r) => JSON.parse(r.files) as string[]));
    const directories = new Set([...rows.map((r) => r.directory), ...[...files].map((f) => dirname(f))]);
    return { files, directories };
  }

  /** Whether the sync is queued or running (its staging folder is in use). */
  async syncLive(syncId: string): Promise<boolean> {
    return (
      (await this.db.get(`SELECT 1 FROM jobs WHERE id = ? AND status IN ('queued', 'running')`, [syncId])) !== undefined
    );
  }
}
