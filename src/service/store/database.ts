import type Database from 'better-sqlite3';
import { requireCommonJs } from '../../load-commonjs.js';
import { applyMigrations } from './migrate.js';
import { MIGRATIONS } from './migrations.js';

export type MetadataDb = Database.Database;

/**
 * Opens the metadata store. WAL lets readers in several `lake` processes run beside one writer; the busy timeout
 * makes a second writer wait for the lock instead of failing with SQLITE_BUSY.
 */
export function openMetadataDb(file: string): MetadataDb {
  const SQLite = requireCommonJs('better-sqlite3') as typeof Database;
  const db = new SQLite(file, { timeout: 15_000 });
  db.pragma('busy_timeout = 15000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  applyMigrations(db, MIGRATIONS);
  cachePreparedStatements(db);
  return db;
}

/**
 * Stores prepare their SQL where they use it; compiling it again on every request showed in profiles. Statements
 * are cached by text. That is safe because none is iterated lazily or reconfigured (raw, pluck) by its callers.
 */
function cachePreparedStatements(db: MetadataDb): void {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, ReturnType<MetadataDb['prepare']>>();
  db.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (!statement) {
      statement = prepare(source);
      cache.set(source, statement);
    }
    return statement;
  }) as MetadataDb['prepare'];
}

/**
 * Runs fn in a transaction that takes the write lock at the start, so that read-then-write sequences from two
 * processes cannot interleave.
 */
export function writeTransaction<T>(db: MetadataDb, fn: () => T): T {
  return db.transaction(fn).immediate();
}
