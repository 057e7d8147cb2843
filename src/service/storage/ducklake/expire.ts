import type { MetadataDb } from '../../store/metadata-db.js';
import type { DuckLakeCatalog } from './catalog.js';

/**
 * Retention the DuckLake way. Snapshots before the one that was current when the window began go, unless a live
 * query still reads them; the current one always stays. Files that only expired snapshots read are moved to ducklake_files_scheduled_for_deletion
 * (their paths made relative to the data path, as the spec says), and the catalog rows of everything that ended
 * before the oldest kept snapshot go with them. All in one transaction: the catalog is before or after, never
 * between. Returns the snapshots expired.
 */
export async function expireSnapshots(
  catalog: DuckLakeCatalog,
  access: { db: MetadataDb; prefix: string },
  /** `now`: when the files are scheduled for deletion (the caller's clock); the present by default. */
  options: { olderThan: Date; oldestLiveSnapshot?: number; now?: Date },
): Promise<number> {
  const t = (name: string): string => `${access.prefix}${name}`;
  const { db } = access;
  return catalog.atomically(async () => {
    const current = await catalog.currentSnapshot();
    // The oldest snapshot kept: the one that was current when the window began (so any time inside the window
    // still reads as it was), or one a live query reads, and never past the current one.
    const atWindowStart = await db.get<{ id: number | null }>(
      `SELECT max(snapshot_id) AS id FROM ${t('ducklake_snapshot')} WHERE snapshot_time <= ?`,
      [options.olderThan.toISOString()],
    );
    if (atWindowStart?.id === null || atWindowStart?.id === undefined) return 0;
    const keep = Math.min(current, Number(atWindowStart.id), options.oldestLiveSnapshot ?? current);
    const expired = await db.run(`DELETE FROM ${t('ducklake_snapshot')} WHERE snapshot_id < ?`, [keep]);
    if (expired.changes === 0) return 0;
    await db.run(`DELETE FROM ${t('ducklake_snapshot_changes')} WHERE snapshot_id < ?`, [keep]);
    const now = (options.now ?? new Date()).toISOString();
    // Data and delete files no kept snapshot reads: scheduled for deletion, with paths from the data path.
    for (const [files, id] of [
      ['ducklake_data_file', 'data_file_id'],
      ['ducklake_delete_file', 'delete_file_id'],
    ] as const) {
      await db.run(
        `INSERT INTO ${t('ducklake_files_scheduled_for_deletion')} (data_file_id, path, path_is_relative, schedule_start)
         SELECT f.${id}, s.path || tb.path || f.path, TRUE, ?
           FROM ${t(files)} f
           JOIN ${t('ducklake_table')} tb ON tb.table_id = f.table_id
           JOIN ${t('ducklake_schema')} s ON s.schema_id = tb.schema_id
          WHERE f.end_snapshot IS NOT NULL AND f.end_snapshot <= ?
            AND tb.begin_snapshot = (SELECT min(begin_snapshot) FROM ${t('ducklake_table')} WHERE table_id = f.table_id)`,
        [now, keep],
      );
      if (files === 'ducklake_data_file')
        await db.run(
          `DELETE FROM ${t('ducklake_file_column_stats')} WHERE data_file_id IN
             (SELECT data_file_id FROM ${t(files)} WHERE end_snapshot IS NOT NULL AND end_snapshot <= ?)`,
          [keep],
        );
      await db.run(`DELETE FROM ${t(files)} WHERE end_snapshot IS NOT NULL AND end_snapshot <= ?`, [keep]);
    }
    // Versions of tables, columns, tags, views and schemas no kept snapshot sees.
    for (const table of [
      'ducklake_column',
      'ducklake_column_tag',
      'ducklake_tag',
      'ducklake_view',
      'ducklake_table',
      'ducklake_schema',
    ])
      await db.run(`DELETE FROM ${t(table)} WHERE end_snapshot IS NOT NULL AND end_snapshot <= ?`, [keep]);
    // What belonged to tables no snapshot has any more, and name mappings no file uses.
    for (const table of ['ducklake_table_stats', 'ducklake_table_column_stats'])
      await db.run(`DELETE FROM ${t(table)} WHERE table_id NOT IN (SELECT table_id FROM ${t('ducklake_table')})`);
    const unused = `mapping_id NOT IN (SELECT mapping_id FROM ${t('ducklake_data_file')} WHERE mapping_id IS NOT NULL)`;
    await db.run(`DELETE FROM ${t('ducklake_name_mapping')} WHERE ${unused}`);
    await db.run(`DELETE FROM ${t('ducklake_column_mapping')} WHERE ${unused}`);
    return expired.changes;
  });
}

/**
 * Takes the files scheduled for deletion at or before `before` out of the catalog and returns their paths,
 * relative to the data path, for the caller to remove. The rows go first: a crash before the files are removed
 * leaves files no catalog row names, which the collector's sweep of unnamed files removes.
 */
export async function takeScheduledFiles(
  catalog: DuckLakeCatalog,
  access: { db: MetadataDb; prefix: string },
  before: Date,
): Promise<string[]> {
  const table = `${access.prefix}ducklake_files_scheduled_for_deletion`;
  return catalog.atomically(async () => {
    const rows = await access.db.all<{ path: string }>(`SELECT path FROM ${table} WHERE schedule_start <= ?`, [
      before.toISOString(),
    ]);
    await access.db.run(`DELETE FROM ${table} WHERE schedule_start <= ?`, [before.toISOString()]);
    return rows.map((r) => r.path);
  });
}
