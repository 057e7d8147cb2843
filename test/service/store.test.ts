import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { applyMigrations } from '../../src/service/store/migrate.js';
import { openMetadataDb } from '../../src/service/store/database.js';
import { redactSecrets } from '../../src/service/redact.js';
import { tempDir } from '../helpers/temp.js';

describe('metadata store', () => {
  it('applies new migrations in order, once, and records them', () => {
    const file = join(tempDir('lake-store'), 'm.sqlite');
    const db = new Database(file);
    const migrations = [
      { version: 2, name: 'two', sql: 'ALTER TABLE t ADD COLUMN b TEXT' },
      { version: 1, name: 'one', sql: 'CREATE TABLE t (a TEXT)' },
    ];
    applyMigrations(db, migrations);
    applyMigrations(db, migrations);
    expect(db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all()).toEqual([
      { version: 1, name: 'one' },
      { version: 2, name: 'two' },
    ]);
    expect(db.prepare("SELECT name FROM pragma_table_info('t')").all()).toEqual([{ name: 'a' }, { name: 'b' }]);
    db.close();
  });

  it('refuses a store written by a newer build instead of misreading it', () => {
    const file = join(tempDir('lake-store'), 'm.sqlite');
    const db = openMetadataDb(file);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, ?, 0)').run('future');
    db.close();
    expect(() => openMetadataDb(file)).toThrow(/newer than this lake build/);
  });

  it('a failed migration leaves the store as it was', () => {
    const db = new Database(join(tempDir('lake-store'), 'm.sqlite'));
    expect(() => applyMigrations(db, [{ version: 1, name: 'ok', sql: 'CREATE TABLE a (x)' }, { version: 2, name: 'bad', sql: 'CREATE TABL b' }])).toThrow();
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'a'").get()).toEqual({ n: 0 });
    db.close();
  });
});

describe('redaction', () => {
  it('removes bearer secrets, URL credentials and password assignments', () => {
    const text = redactSecrets('token pat_abcdefghijklmnop at postgres://bob:hunter2@db.internal:5432/x password=hunter2');
    expect(text).not.toContain('abcdefghijklmnop');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('bob');
  });
});
