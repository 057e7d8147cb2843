import type { Writable } from 'node:stream';
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

  it("send a transaction's statements that go before its first wait in one write, and the COMMIT in another", async () => {
    // The pool's one connection, whose socket's writes are counted (each is a system call, and a wake-up of the
    // PostgreSQL backend).
    const client = await db.pool.connect();
    const socket = (client as unknown as { connection: { stream: Writable & Record<string, unknown> } }).connection
      .stream;
    client.release();
    let writes = 0;
    for (const method of ['_write', '_writev'] as const) {
      const original = socket[method] as (...args: unknown[]) => unknown;
      socket[method] = (...args: unknown[]) => {
        writes++;
        return original.apply(socket, args);
      };
    }
    const counted = await db.transaction(['test:one', 'test:two'], async () => {
      await db.write('INSERT INTO things (id, n) VALUES (?, ?)', ['b', 2]);
      await db.write('INSERT INTO things (id, n) VALUES (?, ?)', ['c', 3]);
      return db.get<{ n: number }>('SELECT count(*) AS n FROM things');
    });
    expect(counted).toEqual({ n: 3 });
    // BEGIN, two locks, two inserts and the read in one write; the COMMIT after the read's answer in another.
    expect(writes).toBe(2);
    expect(await db.all('SELECT id FROM things ORDER BY id')).toEqual([{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
  });
});
