import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestMysqlDatabase } from '../helpers/mysql.js';
import { jsonClient, run, syncSucceeded, type Json } from '../helpers/queries.js';
import { startTransfers } from '../helpers/transfers.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * A large MariaDB table is read in ranges of its key over two connections at once, and still from one point in time:
 * the connections' snapshots are started while another holds the tables locked. While it is read, a writer moves
 * amounts between rows in transactions of its own; from one snapshot every row arrives once and the amounts add
 * up. A user without the LOCK TABLES privilege, or a write transaction holding the table, leaves the read on one
 * connection, and the sync still succeeds.
 */
const db = useTestMysqlDatabase();
const locker = `${db.reader.replace('reader', 'locker')}`;
const rows = 600_000;
let api: Harness;
let call: ReturnType<typeof jsonClient>;

beforeAll(async () => {
  await db.query(
    `CREATE TABLE big (id bigint PRIMARY KEY, amount bigint NOT NULL, payload varchar(120) NOT NULL);
     INSERT INTO big SELECT seq, 100, REPEAT('p', 100) FROM seq_1_to_${rows};
     ANALYZE TABLE big;
     CREATE USER '${locker}'@'%'; GRANT SELECT, LOCK TABLES ON ${db.database}.* TO '${locker}'@'%';`,
  );
  api = await inMemory.start();
  call = jsonClient(api);
}, 120_000);

afterAll(async () => {
  await api?.close();
  await db.query(`DROP USER IF EXISTS '${locker}'@'%'`);
});

const admin = (): Promise<mysql.Connection> =>
  mysql.createConnection({ host: db.host, port: db.port, user: 'root', database: db.database });

/** The ids of the server threads that run a read of `big` while `during` runs (polled every few ms). */
async function readersDuring(during: () => Promise<Json>): Promise<{ job: Json; readers: Set<number> }> {
  const watcher = await admin();
  const readers = new Set<number>();
  let watching = true;
  const watch = (async () => {
    while (watching) {
      const [found] = await watcher.query(
        "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT CONCAT%FROM `%`.`big`%'",
      );
      for (const row of found as { ID: number }[]) readers.add(Number(row.ID));
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
  })();
  try {
    return { job: await during(), readers };
  } finally {
    watching = false;
    await watch;
    await watcher.end();
  }
}

async function sourceAs(name: string, user: string): Promise<string> {
  const source = await call('POST', '/sources', {
    connector: 'mysql',
    name,
    config: { port: db.port, database: db.database, sync_connections: 2 },
    host: db.host,
    user,
  });
  return source.id as string;
}

describe('a large MariaDB table read over several connections', () => {
  it('is read in key ranges side by side, every row once, the amounts adding up under a writer', async () => {
    const size = (await db.query(
      `SELECT DATA_LENGTH AS b FROM information_schema.TABLES WHERE TABLE_SCHEMA = '${db.database}' AND TABLE_NAME = 'big'`,
    )) as { b: number }[];
    // Two ranges need at least twice the smallest range (MIN_RANGE_BYTES, 32 MB).
    expect(Number(size[0]?.b)).toBeGreaterThan(64 << 20);
    const sourceId = await sourceAs('ranged', locker);
    const writer = await admin();
    const writes = startTransfers(rows, async (from, to) => {
      await writer.beginTransaction();
      await writer.query('UPDATE big SET amount = amount - 1 WHERE id = ?', [from]);
      await writer.query('UPDATE big SET amount = amount + 1 WHERE id = ?', [to]);
      await writer.commit();
    });
    const { job, readers } = await readersDuring(() => syncSucceeded(api, sourceId));
    const moved = await writes.stop();
    await writer.end();
    expect(job.status, JSON.stringify(job)).toBe('succeeded');
    expect(moved).toBeGreaterThan(10);
    expect(readers.size).toBe(2);
    const lake = (await run(
      api,
      'select count(*) as n, count(distinct id) as ids, sum(amount)::bigint as total from lake.ranged.big',
    )) as Json;
    expect(lake.data[0]).toEqual({ n: rows, ids: rows, total: rows * 100 });
  }, 180_000);

  it('is read over one connection by a user who may not lock tables, or while a writer holds the table', async () => {
    const plain = await sourceAs('plain', db.reader);
    const first = await readersDuring(() => syncSucceeded(api, plain));
    expect(first.job.status).toBe('succeeded');
    expect(first.readers.size).toBe(1);

    // An open write transaction: the lock is waited for a second, then the sync reads on one connection (the
    // uncommitted change is not in its snapshot).
    const holder = await admin();
    await holder.beginTransaction();
    await holder.query('UPDATE big SET amount = amount + 1000 WHERE id = 1');
    const ranged = await sourceAs('held', locker);
    const started = performance.now();
    const second = await readersDuring(() => syncSucceeded(api, ranged));
    await holder.rollback();
    await holder.end();
    expect(second.job.status).toBe('succeeded');
    expect(second.readers.size).toBe(1);
    expect(performance.now() - started).toBeGreaterThan(1000);
    const lake = (await run(api, 'select count(*) as n, sum(amount)::bigint as total from lake.held.big')) as Json;
    expect(lake.data[0]).toEqual({ n: rows, total: rows * 100 });
  }, 180_000);
});
