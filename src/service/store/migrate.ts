import type Database from 'better-sqlite3';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * Applies the migrations this build knows and the store has not seen, in order, each recorded in
 * schema_migrations. The whole check runs under the write lock, so two processes opening a new home at once apply
 * each migration exactly once. A store newer than this build is refused rather than misread.
 */
export function applyMigrations(db: Database.Database, migrations: readonly Migration[]): void {
  const run = db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    )`);
    const applied = new Set(
      (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((row) => row.version),
    );
    const newest = Math.max(0, ...applied);
    const known = Math.max(0, ...migrations.map((m) => m.version));
    if (newest > known) {
      throw new Error(
        `This home's metadata store is at schema version ${newest}, newer than this lake build understands (${known}). Upgrade lake.`,
      );
    }
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, Math.floor(Date.now() / 1000));
    }
  });
  run.immediate();
}
