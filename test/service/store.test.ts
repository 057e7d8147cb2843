import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../src/service/store/migrate.js';
import { openMetadataDb } from '../../src/service/store/database.js';
import { lock, type MetadataDb } from '../../src/service/store/metadata-db.js';
import { PostgresMetadataDb } from '../../src/service/store/postgres-db.js';
import { SqliteMetadataDb } from '../../src/service/store/sqlite-db.js';
import { redactSecrets } from '../../src/service/core/redact.js';
import { createMetadataDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait-for.js';

interface StoreKind {
  name: string;
  /** A new, empty store; `target` is what openMetadataDb takes for it. */
  fresh(): Promise<{ db: MetadataDb; target: string }>;
}

const dropped: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const drop of dropped) await drop();
});

const KINDS: StoreKind[] = [
  {
    name: 'sqlite',
    async fresh() {
      const target = join(tempDir('lake-store'), 'm.sqlite');
      return { db: SqliteMetadataDb.open(target), target };
    },
  },
  {
    name: 'postgres',
    async fresh() {
      const database = await createMetadataDatabase();
      dropped.push(database.drop);
      return { db: PostgresMetadataDb.open(database.url), target: database.url };
    },
  },
];

/** Opens the store at target listening on channel, once a notice sent now is heard (on PostgreSQL, LISTEN is sent on its own connection). */
async function listeningStore(target: string, channel: string): Promise<{ db: MetadataDb; heard: string[] }> {
  const db = await openMetadataDb(target);
  const heard: string[] = [];
  db.listen(channel, (payload) => heard.push(payload));
  await waitFor(
    async () => {
      await db.notify(channel, 'probe');
      return heard.includes('probe');
    },
    (yes) => yes,
    { intervalMs: 50 },
  );
  return { db, heard };
}

/**
 * A read-then-write counter bumped `times` times, alternately through two stores (as two replicas, or two processes
 * on one SQLite file, would): each bump reads the row, pauses and writes it plus one, inside `around`. A bump that
 * interleaved with another would lose a count. Returns the row's final value and closes both stores.
 */
async function raceCounter(
  target: string,
  key: string,
  times: number,
  around: (db: MetadataDb, i: number, bump: () => Promise<void>) => Promise<void>,
): Promise<string> {
  const [one, two] = await Promise.all([openMetadataDb(target), openMetadataDb(target)]);
  await one.run("INSERT INTO home_settings (key, value) VALUES (?, '0')", [key]);
  const read = (db: MetadataDb) => db.get<{ value: string }>('SELECT value FROM home_settings WHERE key = ?', [key]);
  const bump = (db: MetadataDb) => async () => {
    const { value } = (await read(db))!;
    await new Promise((resolve) => setTimeout(resolve, 2));
    await db.write('UPDATE home_settings SET value = ? WHERE key = ?', [String(Number(value) + 1), key]);
  };
  await Promise.all(
    Array.from({ length: times }, (_, i) => {
      const db = i % 2 ? one : two;
      return around(db, i, bump(db));
    }),
  );
  const { value } = (await read(one))!;
  await one.close();
  await two.close();
  return value;
}

describe.each(KINDS)('metadata store ($name)', (kind) => {
  it('applies new migrations in order, once, and records them', async () => {
    const { db } = await kind.fresh();
    const migrations = [
      { version: 2, name: 'two', sql: 'ALTER TABLE t ADD COLUMN b TEXT' },
      { version: 1, name: 'one', sql: 'CREATE TABLE t (a TEXT)' },
    ];
    await applyMigrations(db, migrations);
    await applyMigrations(db, migrations);
    expect(await db.all('SELECT version, name FROM schema_migrations ORDER BY version')).toEqual([
      { version: 1, name: 'one' },
      { version: 2, name: 'two' },
    ]);
    await db.run("INSERT INTO t (a, b) VALUES ('x', 'y')");
    expect(await db.all('SELECT a, b FROM t')).toEqual([{ a: 'x', b: 'y' }]);
    await db.close();
  });

  it('refuses a store written by a newer build instead of misreading it', async () => {
    const { db, target } = await kind.fresh();
    await db.close();
    const opened = await openMetadataDb(target);
    await opened.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, ?, 0)', ['future']);
    await opened.close();
    await expect(openMetadataDb(target)).rejects.toThrow(/newer than this lake build/);
  });

  it('a failed migration leaves the store as it was', async () => {
    const { db } = await kind.fresh();
    await expect(
      applyMigrations(db, [
        { version: 1, name: 'ok', sql: 'CREATE TABLE a (x TEXT)' },
        { version: 2, name: 'bad', sql: 'CREATE TABL b' },
      ]),
    ).rejects.toThrow();
    await expect(db.all('SELECT * FROM a')).rejects.toThrow();
    await db.close();
  });

  it('migrates once when several processes open a new store at the same moment', async () => {
    const { db, target } = await kind.fresh();
    await db.close();
    const opened = await Promise.all(Array.from({ length: 4 }, () => openMetadataDb(target)));
    const versions = await opened[0]!.all<{ version: number }>('SELECT version FROM schema_migrations');
    expect(new Set(versions.map((v) => v.version)).size).toBe(versions.length);
    for (const each of opened) await each.close();
  });

  it('a transaction commits all or nothing, and notices wait for the commit', async () => {
    const { db: raw, target } = await kind.fresh();
    await raw.close();
    const { db, heard } = await listeningStore(target, 'test_channel');
    await expect(
      db.transaction(lock.job('a'), async () => {
        await db.run("INSERT INTO home_settings (key, value) VALUES ('rolled', 'back')");
        await db.notify('test_channel', 'never');
        throw new Error('stop');
      }),
    ).rejects.toThrow('stop');
    expect(await db.get("SELECT value FROM home_settings WHERE key = 'rolled'")).toBeUndefined();
    await db.transaction(lock.job('a'), async () => {
      await db.run("INSERT INTO home_settings (key, value) VALUES ('kept', 'yes')");
      await db.notify('test_channel', 'committed');
    });
    await expect.poll(() => heard.filter((p) => p !== 'probe'), { timeout: 3000 }).toEqual(['committed']);
    await db.close();
  });

  it('a write and its notice: the notice after the commit, neither after a rollback', async () => {
    const { db: raw, target } = await kind.fresh();
    await raw.close();
    const { db, heard } = await listeningStore(target, 'test_run_notify');
    const insert = "INSERT INTO home_settings (key, value) VALUES (?, 'x')";
    const notice = (payload: string) => ({ channel: 'test_run_notify', payload });
    await expect(
      db.transaction(lock.job('n'), async () => {
        await db.write(insert, ['gone'], notice('never'));
        throw new Error('stop');
      }),
    ).rejects.toThrow('stop');
    await db.transaction(lock.job('n'), () => db.write(insert, ['kept'], notice('committed')));
    // A write that changes nothing still announces, as run() then notify() does; outside a transaction, at once.
    await db.write("DELETE FROM home_settings WHERE key = 'none'", [], notice('empty'));
    await expect.poll(() => heard.filter((p) => p !== 'probe'), { timeout: 3000 }).toEqual(['committed', 'empty']);
    expect(await db.get("SELECT key FROM home_settings WHERE key IN ('gone', 'kept')")).toEqual({ key: 'kept' });
    await db.close();
  });

  it('stores text holding a NUL character, as U+FFFD where PostgreSQL cannot hold it; looks one up as nothing', async () => {
    const { db: raw, target } = await kind.fresh();
    await raw.close();
    const db = await openMetadataDb(target);
    await db.run('INSERT INTO home_settings (key, value) VALUES (?, ?)', ['nul', 'a\u0000b']);
    const stored = await db.get<{ value: string }>('SELECT value FROM home_settings WHERE key = ?', ['nul']);
    expect(stored?.value).toBe(kind.name === 'postgres' ? 'a\uFFFDb' : 'a\u0000b');
    expect(await db.get('SELECT value FROM home_settings WHERE key = ?', ['nul\u0000'])).toBeUndefined();
    await db.transaction(lock.job('n'), () =>
      db.write('INSERT INTO home_settings (key, value) VALUES (?, ?)', ['held', '\u0000']),
    );
    expect(await db.get('SELECT key FROM home_settings WHERE key = ?', ['held'])).toEqual({ key: 'held' });
    await db.close();
  });

  it("held writes: in order, seen by the transaction's next statement, whatever text their values hold", async () => {
    const { db: raw, target } = await kind.fresh();
    await raw.close();
    const db = await openMetadataDb(target);
    const odd = [
      "it's",
      'back\\slash',
      "'); DROP TABLE home_settings; --",
      'plain ? mark',
      'nul\u0000byte'.slice(0, 3),
    ];
    const seen = await db.transaction(lock.job('w'), async () => {
      for (const [i, value] of odd.entries())
        await db.write('INSERT INTO home_settings (key, value) VALUES (?, ?)', [`w${i}`, value]);
      await db.write("UPDATE home_settings SET value = value || '!' WHERE key = ?", ['w0']);
      return db.all<{ value: string }>("SELECT value FROM home_settings WHERE key LIKE 'w%' ORDER BY key");
    });
    expect(seen.map((r) => r.value)).toEqual([`${odd[0]}!`, ...odd.slice(1)]);
    // The last writes of a transaction go with its commit.
    await db.transaction(lock.job('w'), () => db.write("DELETE FROM home_settings WHERE key = 'w1'"));
    expect(await db.get("SELECT key FROM home_settings WHERE key = 'w1'")).toBeUndefined();
    await db.close();
  });

  it('a held write that fails fails its transaction, at the next statement or at the commit, and keeps nothing', async () => {
    const { db: raw, target } = await kind.fresh();
    await raw.close();
    const db = await openMetadataDb(target);
    await db.run("INSERT INTO home_settings (key, value) VALUES ('taken', '1')");
    const duplicate = "INSERT INTO home_settings (key, value) VALUES ('taken', '2')";
    await expect(
      db.transaction(lock.job('f'), async () => {
        await db.write("INSERT INTO home_settings (key, value) VALUES ('before', '1')");
        await db.write(duplicate);
        await db.get('SELECT 1 AS one');
      }),
    ).rejects.toThrow();
    await expect(
      db.transaction(lock.job('f'), async () => {
        await db.write("INSERT INTO home_settings (key, value) VALUES ('before', '1')");
        await db.write(duplicate);
      }),
    ).rejects.toThrow();
    expect(await db.all("SELECT key, value FROM home_settings WHERE key IN ('before', 'taken')")).toEqual([
      { key: 'taken', value: '1' },
    ]);
    await db.close();
  });

  it('a lock taken by a nested transaction still serializes its read-then-write', async () => {
    const { db: raw, target } = await kind.fresh();
    await raw.close();
    const value = await raceCounter(target, 'nested', 16, (db, i, bump) =>
      db.transaction(lock.job(`outer-${i}`), async () => {
        await db.write("INSERT INTO home_settings (key, value) VALUES (?, 'x')", [`outer-${i}`]);
        await db.transaction(lock.job('nested'), bump);
      }),
    );
    expect(value).toBe('16');
  });

  it('a locked statement reads and writes exactly its parameters, whatever text they hold', async () => {
    const { db: raw, target } = await kind.fresh();
    await raw.close();
    const db = await openMetadataDb(target);
    const odd = ["it's", 'back\\slash', "'); DROP TABLE home_settings; --", 'plain ? mark'];
    for (const [i, value] of odd.entries()) {
      const rows = await db.allLocked<{ key: string; value: string }>(
        [lock.job(value)],
        'INSERT INTO home_settings (key, value) VALUES (?, ?) RETURNING key, value',
        [`k${i}`, value],
      );
      expect(rows).toEqual([{ key: `k${i}`, value }]);
    }
    expect(
      await db.all('SELECT value FROM home_settings WHERE key IN (?, ?, ?, ?) ORDER BY key', ['k0', 'k1', 'k2', 'k3']),
    ).toEqual(odd.map((value) => ({ value })));
    await db.close();
  });

  it('lock names holding quotes, backslashes or SQL still serialize (and inject nothing)', async () => {
    const { db: raw, target } = await kind.fresh();
    await raw.close();
    const names = [lock.job("it's'); DROP TABLE home_settings; --"), lock.job('back\\slash'), lock.job('plain')];
    const value = await raceCounter(target, 'odd', 18, (db, i, bump) =>
      db.transaction([names[i % 3]!, names[(i + 1) % 3]!], bump),
    );
    expect(value).toBe('18');
  });

  it('transactions naming one lock never interleave (a read-then-write counter loses nothing)', async () => {
    const { db: raw, target } = await kind.fresh();
    await raw.close();
    expect(await raceCounter(target, 'counter', 20, (db, _i, bump) => db.transaction(lock.job('counter'), bump))).toBe(
      '20',
    );
  });
});

describe('metadata store (postgres): round trips', () => {
  /** Counts the statements a store's connections have sent and not yet had answered, at their most. */
  function inFlight(db: MetadataDb): { most(): number; pipelined(): boolean } {
    let now = 0;
    let most = 0;
    let pipelined = true;
    const counted = new WeakSet<object>();
    (db as PostgresMetadataDb).pool.on('acquire', (client) => {
      // Sent at once, not queued in the driver until the answer before: the connection pipelines.
      pipelined &&= (client as { pipeline?: boolean }).pipeline === true;
      if (counted.has(client)) return;
      counted.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown> | undefined;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        const answered = query(...args);
        // A query with a callback (the pool's own) returns nothing to count.
        if (answered === undefined) return answered;
        most = Math.max(most, ++now);
        answered.then(
          () => now--,
          () => now--,
        );
        return answered;
      };
    });
    return { most: () => most, pipelined: () => pipelined };
  }

  it("sends a transaction's writes without waiting for each, and waits for them with its next statement", async () => {
    const database = await createMetadataDatabase();
    dropped.push(database.drop);
    const db = await openMetadataDb(database.url);
    const sent = inFlight(db);
    const value = await db.transaction(lock.job('rt'), async () => {
      for (let i = 0; i < 5; i++)
        await db.write('INSERT INTO home_settings (key, value) VALUES (?, ?)', [`rt${i}`, String(i)]);
      const row = await db.get<{ n: number }>("SELECT count(*) AS n FROM home_settings WHERE key LIKE 'rt%'");
      await db.write("UPDATE home_settings SET value = 'last' WHERE key = 'rt0'");
      return row?.n;
    });
    expect(value).toBe(5);
    // BEGIN, its lock, the five inserts and the count were on the wire together.
    expect(sent.most()).toBe(8);
    expect(sent.pipelined()).toBe(true);
    expect(await db.get("SELECT value FROM home_settings WHERE key = 'rt0'")).toEqual({ value: 'last' });
    await db.close();
  });

  it('sends a locked statement with its BEGIN, locks and COMMIT at once', async () => {
    const database = await createMetadataDatabase();
    dropped.push(database.drop);
    const db = await openMetadataDb(database.url);
    const sent = inFlight(db);
    const rows = await db.allLocked<{ key: string }>(
      [lock.job('a'), lock.job('b')],
      "INSERT INTO home_settings (key, value) VALUES (?, 'x') RETURNING key",
      ['locked'],
    );
    expect(rows).toEqual([{ key: 'locked' }]);
    // BEGIN, the two locks, the statement and COMMIT.
    expect(sent.most()).toBe(5);
    await db.close();
  });

  it('a transaction whose failed statement was caught fails at its commit and keeps nothing', async () => {
    const database = await createMetadataDatabase();
    dropped.push(database.drop);
    const db = await openMetadataDb(database.url);
    await db.run("INSERT INTO home_settings (key, value) VALUES ('taken', '1')");
    // PostgreSQL aborts the transaction at the failed statement and answers its COMMIT with ROLLBACK: an error,
    // never a commit that silently kept nothing.
    await expect(
      db.transaction(lock.job('c'), async () => {
        await db.run("INSERT INTO home_settings (key, value) VALUES ('first', '1')");
        await db.run("INSERT INTO home_settings (key, value) VALUES ('taken', '2')").catch(() => undefined);
      }),
    ).rejects.toThrow(/rolled back/);
    expect(await db.get("SELECT key FROM home_settings WHERE key = 'first'")).toBeUndefined();
    await db.close();
  });
});

describe('redaction', () => {
  it('removes bearer secrets, URL credentials and password assignments', () => {
    const text = redactSecrets(
      'token pat_abcdefghijklmnop at postgres://bob:hunter2@db.internal:5432/x password=hunter2',
    );
    expect(text).not.toContain('abcdefghijklmnop');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('bob');
  });
});
