import { lock, type Dialect, type MetadataDb } from './metadata-db.js';

export interface Migration {
  version: number;
  name: string;
  /** Written for SQLite; PostgreSQL runs it translated (see forDialect) unless `postgres` gives its own text. */
  sql: string;
  postgres?: string;
}

/**
 * The migration's text for a store. PostgreSQL's INTEGER is 32 bits, and lake keeps epoch milliseconds in
 * integer columns: BIGINT there. Text compares byte by byte, as in SQLite, so ids sort and page the same way on
 * both stores whatever the database's collation.
 */
export function forDialect(migration: Migration, dialect: Dialect): string {
  if (dialect === 'sqlite') return migration.sql;
  return (migration.postgres ?? migration.sql)
    .replace(/\bINTEGER\b/g, 'BIGINT')
    .replace(/\bTEXT\b/g, 'TEXT COLLATE "C"');
}

/**
 * Applies the migrations this build knows and the store has not seen, in order, each recorded in
 * schema_migrations. The whole check runs under one lock (SQLite's write lock, a PostgreSQL advisory lock), so
 * processes and replicas opening a new store at once apply each migration exactly once. A store newer than this
 * build is refused rather than misread.
 */
export async function applyMigrations(db: MetadataDb, migrations: readonly Migration[]): Promise<void> {
  await db.transaction(lock.migrations(), async () => {
    await db.execScript(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    )`);
    const applied = new Set(
      (await db.all<{ version: number }>('SELECT version FROM schema_migrations')).map((row) => row.version),
    );
    const newest = Math.max(0, ...applied);
    const known = Math.max(0, ...migrations.map((m) => m.version));
    if (newest > known) {
      throw new Error(
        `This metadata store is at schema version ${newest}, newer than this lake build understands (${known}). Upgrade lake.`,
      );
    }
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue;
      await db.execScript(forDialect(migration, db.dialect));
      await db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
        migration.version,
        migration.name,
        Math.floor(Date.now() / 1000),
      ]);
    }
  });
}
