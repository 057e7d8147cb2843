import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresMetadataDb } from '../../src/service/store/postgres-db.js';
import { createMetadataDatabase } from '../helpers/postgres.js';

describe('PostgreSQL metadata statements', () => {
  let database: { url: string; drop(): Promise<void> };
  let db: PostgresMetadataDb;
  beforeAll(async () => {
    database = await createMetadataDatabase();
    // One connection: every statement meets the same prepared-statement cache.
    db = PostgresMetadataDb.open(database.url, { max: 1 });
    await db.execScript('CREATE TABLE things (id TEXT PRIMARY KEY, n BIGINT)');
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('are prepared once per connection and run again by name', async () => {
    await db.run('INSERT INTO things (id, n) VALUES (?, ?)', ['a', 1]);
    for (let i = 0; i < 3; i++) expect(await db.get('SELECT n FROM things WHERE id = ?', ['a'])).toEqual({ n: 1 });
    const prepared = await db.all<{ statement: string }>('SELECT statement FROM pg_prepared_statements');
    expect(prepared.map((p) => p.statement)).toContain('SELECT n FROM things WHERE id = $1');
  });

  it('still answer when a table changes shape under a prepared statement, in and out of a transaction', async () => {
    expect(await db.all('SELECT * FROM things')).toEqual([{ id: 'a', n: 1 }]);
    expect(await db.transaction([], () => db.all('SELECT * FROM things ORDER BY id'))).toEqual([{ id: 'a', n: 1 }]);
    await db.execScript('ALTER TABLE things ADD COLUMN note TEXT');
    expect(await db.all('SELECT * FROM things')).toEqual([{ id: 'a', n: 1, note: null }]);
    expect(await db.transaction([], () => db.all('SELECT * FROM things ORDER BY id'))).toEqual([
      { id: 'a', n: 1, note: null },
    ]);
  });
});
