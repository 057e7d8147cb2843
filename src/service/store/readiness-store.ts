import type { MetadataDb } from './metadata-db.js';

/** One round trip to the metadata store; throws as any statement would when it cannot be reached. */
export async function pingMetadata(db: MetadataDb): Promise<void> {
  await db.get('SELECT 1 AS ok');
}
