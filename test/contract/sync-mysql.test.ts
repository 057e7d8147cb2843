import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestMysqlDatabase } from '../helpers/mysql.js';
import { jsonClient, run, syncEnded, syncSucceeded, type Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * A MariaDB source end to end: discovered and tested live, with the generic failure for bad credentials; a full
 * sync, then incremental ones by cursor merged on the primary key, and a column added at the source read whole.
 */
const db = useTestMysqlDatabase();
let api: Harness;
let call: ReturnType<typeof jsonClient>;

beforeAll(async () => {
  await db.query(
    `CREATE TABLE orders (id int PRIMARY KEY, customer varchar(40) NOT NULL, total decimal(10,2), updated_at datetime(6) NOT NULL);
     INSERT INTO orders SELECT seq, CONCAT('customer ', seq % 7), seq * 1.5, '2024-01-01 00:00:00' FROM seq_1_to_500;
     CREATE TABLE notes (body text);
     INSERT INTO notes VALUES ('no key'), (NULL);
     CREATE TABLE texts (id int PRIMARY KEY, l varchar(20) CHARACTER SET latin1, u3 varchar(20) CHARACTER SET utf8mb3,
                         g varchar(20) COLLATE utf8mb4_general_ci, b varchar(20) COLLATE utf8mb4_bin NOT NULL,
                         u text COLLATE utf8mb4_unicode_ci);
     INSERT INTO texts VALUES (1, 'café "x", y', 'naïve\nline', 'Ωmega 😀 "q"', 'bin,"', 'ünï 😀\r\n'),
                              (2, NULL, '', NULL, '', NULL), (3, '"', '""', ',', '\n', '');`,
  );
  api = await inMemory.start();
  call = jsonClient(api);
}, 60_000);

afterAll(async () => {
  await api?.close();
});

/** A source of the test database, read as its reader, named `name`. */
const mysqlSource = (name: string): Promise<Json> =>
  call('POST', '/sources', {
    connector: 'mysql',
    name,
    config: { port: db.port, database: db.database },
    host: db.host,
    user: db.reader,
  });

const lakeSums = async (): Promise<Json> =>
  ((await run(api, 'select count(*) as n, sum(total) as total, max(updated_at) as at from lake.shop.orders')) as Json)
    .data[0];
const sourceSums = async (): Promise<Json> => {
  const [row] = (await db.query('SELECT count(*) AS n, sum(total) AS total FROM orders')) as Record<string, unknown>[];
  return { n: Number(row?.n), total: String(row?.total) };
};

describe('a MariaDB source', () => {
  let sourceId: string;

  it('is discovered live with its tables, columns and keys, and tests ok', async () => {
    const source = await mysqlSource('shop');
    sourceId = source.id as string;
    const orders = (source.tables as Json[]).find((t) => t.name === 'orders') as Json;
    expect(orders).toMatchObject({ schema: db.database, primary_key: ['id'], enabled: true });
    expect(orders.columns.map((c: Json) => [c.name, c.type, c.nullable])).toEqual([
      ['id', 'int(11)', false],
      ['customer', 'varchar(40)', false],
      ['total', 'decimal(10,2)', true],
      ['updated_at', 'datetime(6)', false],
    ]);
    const tested = await call('POST', `/sources/${sourceId}/test`);
    expect(tested).toMatchObject({ object: 'source_test', supported: true, ok: true, reason: null });
  });

  it('fails a test with a generic reason, naming no host or user', async () => {
    const wrong = await call('POST', '/sources', {
      connector: 'mysql',
      name: 'wrong',
      config: { port: db.port, database: db.database },
      host: db.host,
      user: `${db.reader}_nobody`,
      password: 'not-it',
    });
    // Created, with nothing discovered: the source says so, and a test says why in the fixed vocabulary.
    expect(wrong.tables).toEqual([]);
    const tested = await call('POST', `/sources/${wrong.id}/test`);
    expect(tested).toMatchObject({ ok: false, reason: 'authentication_failed' });
    for (const answer of [wrong, tested]) {
      expect(JSON.stringify(answer)).not.toContain(db.reader);
      expect(JSON.stringify(answer)).not.toContain('not-it');
    }
  });

  it('syncs whole, then merges changed rows by cursor on the primary key', async () => {
    await call('PATCH', `/sources/${sourceId}`, {
      tables: [{ schema: db.database, name: 'orders', mode: 'incremental', cursor_column: 'updated_at' }],
    });
    await syncSucceeded(api, sourceId);
    expect(await lakeSums()).toMatchObject(await sourceSums());
    const keyless = (await run(api, 'select count(*) as n from lake.shop.notes')) as Json;
    expect(keyless.data[0].n).toBe(2);

    await db.query(
      `UPDATE orders SET total = total + 100, updated_at = '2024-02-01 00:00:00.5' WHERE id % 10 = 0;
       INSERT INTO orders VALUES (501, 'new', 1.25, '2024-02-01 00:00:01');`,
    );
    const job = await syncSucceeded(api, sourceId);
    expect(await lakeSums()).toMatchObject(await sourceSums());
    const latest = (await call('GET', `/sources/${sourceId}`)).latest_sync as Json;
    expect(latest.id).toBe(job.id);
    // The rows at the cursor's last value, the 50 changed and the one new one were read: not the table.
    expect((latest.tables as Json[]).find((t) => t.table === `${db.database}.orders`)?.completed).toBe(501);
    const usage = (await run(api, "select count(*) as n from lake.shop.orders where customer = 'new'")) as Json;
    expect(usage.data[0].n).toBe(1);

    // Nothing changed since: the rows at the cursor's last value are read again, found as they are, and the table
    // keeps its snapshot.
    const orders = async () =>
      (await api.services.lake.tables.get(api.home.organization.id, 'shop', 'orders'))?.snapshot.id;
    const quiet = await orders();
    await syncSucceeded(api, sourceId);
    expect(await orders()).toBe(quiet);
  });

  it('keeps the text of every character set and collation of one table exactly, quotes and line ends too', async () => {
    await syncSucceeded(api, sourceId);
    const inLake = (await run(api, 'select id, l, u3, g, b, u from lake.shop.texts order by id')) as Json;
    const inSource = (await db.query('SELECT id, l, u3, g, b, u FROM texts ORDER BY id')) as Json[];
    expect(inLake.data).toEqual(inSource.map((row) => ({ ...row, id: Number(row.id) })));
    expect(inLake.data[0].g).toBe('Ωmega 😀 "q"');
  });

  it('fails a cdc table with what to do when the server keeps no binary log, and syncs the others', async () => {
    await call('PATCH', `/sources/${sourceId}`, {
      tables: [{ schema: db.database, name: 'orders', mode: 'cdc' }],
    });
    await syncEnded(api, sourceId);
    const latest = (await call('GET', `/sources/${sourceId}`)).latest_sync as Json;
    const orders = (latest.tables as Json[]).find((t) => t.table === `${db.database}.orders`) as Json;
    expect(orders.phase).toBe('failed');
    expect(orders.error).toMatch(/binary log is off: cdc needs the server started with log_bin and binlog_format=ROW/);
    // The table as the last sync left it.
    expect(await lakeSums()).toMatchObject(await sourceSums());
  });

  it('detects rows deleted at the source by their keys, in the sync’s snapshot', async () => {
    await call('PATCH', `/sources/${sourceId}`, {
      tables: [
        { schema: db.database, name: 'orders', mode: 'incremental', cursor_column: 'updated_at', detect_deletes: true },
      ],
    });
    await db.query(
      `DELETE FROM orders WHERE id IN (3, 4, 5, 501);
       UPDATE orders SET total = 9, updated_at = '2024-03-01 00:00:00' WHERE id = 6;`,
    );
    await syncSucceeded(api, sourceId);
    expect(await lakeSums()).toMatchObject(await sourceSums());
    const latest = (await call('GET', `/sources/${sourceId}`)).latest_sync as Json;
    expect((latest.tables as Json[]).find((t) => t.table === `${db.database}.orders`)?.deleted).toBe(4);
    const gone = (await run(api, 'select count(*) as n from lake.shop.orders where id in (3, 4, 5, 501)')) as Json;
    expect(gone.data[0].n).toBe(0);
  });

  it('compacts a table after its eighth merge, keeping deletes detected', async () => {
    for (let merge = 1; merge <= 9; merge++) {
      await db.query(
        `UPDATE orders SET total = total + 1, updated_at = '2024-04-0${merge} 00:00:00' WHERE id % 9 = ${merge - 1};
           DELETE FROM orders WHERE id = ${10 + merge};`,
      );
      await syncSucceeded(api, sourceId);
    }
    expect(await lakeSums()).toMatchObject(await sourceSums());
    const files = (await run(api, 'select count(*) as n from lake.shop.orders where id between 11 and 19')) as Json;
    expect(files.data[0].n).toBe(0);
  });

  it('reads a table whole again after a column is added at the source', async () => {
    await db.query(`ALTER TABLE orders ADD COLUMN note varchar(10) DEFAULT 'x'`);
    await syncSucceeded(api, sourceId);
    const noted = (await run(api, "select count(*) filter (where note = 'x') as n from lake.shop.orders")) as Json;
    expect(noted.data[0].n).toBe(488);
    expect(await lakeSums()).toMatchObject(await sourceSums());
  });

  it('fails a keyed table whose key column is gone with what to do, and takes the key set again', async () => {
    await db.query(
      `CREATE TABLE rekeyed (id int PRIMARY KEY, code int NOT NULL, v int NOT NULL);
       INSERT INTO rekeyed SELECT seq, 100 + seq, seq FROM seq_1_to_5;`,
    );
    const source = await mysqlSource('rekeyed');
    const id = source.id as string;
    await call('PATCH', `/sources/${id}`, {
      tables: (source.tables as Json[]).map((t) =>
        t.name === 'rekeyed'
          ? { schema: db.database, name: 'rekeyed', mode: 'incremental', cursor_column: 'v', detect_deletes: true }
          : { schema: db.database, name: t.name, enabled: false },
      ),
    });
    await syncSucceeded(api, id);
    await db.query(
      `ALTER TABLE rekeyed DROP PRIMARY KEY, DROP COLUMN id, ADD PRIMARY KEY (code); DELETE FROM rekeyed WHERE code = 101`,
    );
    await syncEnded(api, id);
    const failed = ((await call('GET', `/sources/${id}`)).latest_sync.tables as Json[])[0] as Json;
    expect(failed).toMatchObject({
      phase: 'failed',
      error: expect.stringMatching(/^its primary key names a column the table does not have \(id\); set the key again/),
    });
    await call('PATCH', `/sources/${id}`, {
      tables: [{ schema: db.database, name: 'rekeyed', primary_key: ['code'] }],
    });
    await syncSucceeded(api, id);
    await db.query(`UPDATE rekeyed SET v = 10 WHERE code = 102; DELETE FROM rekeyed WHERE code = 103`);
    await syncSucceeded(api, id);
    const rows = (await run(api, 'select code, v from lake.rekeyed.rekeyed order by code')) as Json;
    expect(rows.data).toEqual([
      { code: 102, v: 10 },
      { code: 104, v: 4 },
      { code: 105, v: 5 },
    ]);
  });

  it('takes a system-versioned table as its current rows, keyed without the row_end MariaDB adds to its keys', async () => {
    // Its TABLE_TYPE is SYSTEM VERSIONED, not BASE TABLE; its key is (id, row_end) to the server, and row_end is no
    // column a SELECT reads.
    await db.query(
      `CREATE TABLE versioned (id int PRIMARY KEY, v int NOT NULL) WITH SYSTEM VERSIONING;
       INSERT INTO versioned VALUES (1, 1), (2, 1), (3, 1); UPDATE versioned SET v = 2 WHERE id = 1;`,
    );
    const source = await mysqlSource('versioned');
    const versioned = (source.tables as Json[]).find((t) => t.name === 'versioned') as Json;
    expect(versioned).toMatchObject({ primary_key: ['id'], enabled: true });
    expect(versioned.columns.map((c: Json) => c.name)).toEqual(['id', 'v']);
    await call('PATCH', `/sources/${source.id}`, {
      tables: [
        { schema: db.database, name: 'versioned', mode: 'incremental', cursor_column: 'v', detect_deletes: true },
      ],
    });
    const rows = async (): Promise<Json> =>
      ((await run(api, 'select id, v from lake.versioned.versioned order by id')) as Json).data;
    await syncSucceeded(api, source.id as string);
    expect(await rows()).toEqual([
      { id: 1, v: 2 },
      { id: 2, v: 1 },
      { id: 3, v: 1 },
    ]);
    // Each change leaves a history row behind at the source; the lake keeps the current ones, merged by id.
    await db.query(`UPDATE versioned SET v = 3 WHERE id = 2; DELETE FROM versioned WHERE id = 3;`);
    await syncSucceeded(api, source.id as string);
    expect(await rows()).toEqual([
      { id: 1, v: 2 },
      { id: 2, v: 3 },
    ]);
  });
});
