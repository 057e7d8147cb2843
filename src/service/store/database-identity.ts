import type { MetadataDb } from './metadata-db.js';

/** Which PostgreSQL cluster and database a connection reached, as the server itself reports them. */
export interface DatabaseIdentity {
  /** pg_control_system().system_identifier: unique to a cluster, whatever address or port reaches it. */
  system: string;
  database: string;
}

/**
 * The metadata database's identity as PostgreSQL reports it (cluster and database), asked once; SQLite has none.
 * Connections lake makes for tenants compare what they reached with it.
 */
export function metadataIdentity(db: MetadataDb): () => Promise<DatabaseIdentity | undefined> {
  let asked: Promise<DatabaseIdentity | undefined> | undefined;
  return () => {
    if (db.dialect !== 'postgres') return Promise.resolve(undefined);
    asked ??= db
      .get<DatabaseIdentity>(
        'SELECT system_identifier::text AS system, current_database() AS database FROM pg_control_system()',
      )
      .catch(() => {
        asked = undefined;
        return undefined;
      });
    return asked;
  };
}
