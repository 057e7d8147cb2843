import { applyMigrations } from './migrate.js';
import { MIGRATIONS } from './migrations.js';
import type { MetadataDb } from './metadata-db.js';
import { PostgresMetadataDb } from './postgres-db.js';
import { SqliteMetadataDb } from './sqlite-db.js';

export type { MetadataDb } from './metadata-db.js';

/** A PostgreSQL URL (LAKE_METADATA_URL) rather than a file in the home. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/**
 * Opens the metadata store, migrated to this build's schema: the SQLite file in the home, or the PostgreSQL
 * database that replicas share.
 */
export async function openMetadataDb(target: string): Promise<MetadataDb> {
  const db = isPostgresUrl(target) ? PostgresMetadataDb.open(target) : SqliteMetadataDb.open(target);
  try {
    await applyMigrations(db, MIGRATIONS);
    return db;
  } catch (error) {
    await db.close();
    throw error;
  }
}
