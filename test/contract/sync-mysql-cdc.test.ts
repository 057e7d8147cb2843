import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivateMariadb, type PrivateMariadb } from '../helpers/mysql.js';
import { jsonClient, run, syncEnded, syncSucceeded, type Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * Change data capture from a MariaDB binary log (a server of the test's own, `--log-bin --binlog-format=ROW`): a
 * cdc table is copied whole once, then takes inserts, updates (a key changed too), deletes and TRUNCATEs from the
 * log, each sync's as one commit tagged with the position it reached. Every value family's edge values travel
 * through the log: the table is compared, row for row and both ways, with a full copy of the same table made by a
 * second source in the same sync's time, which the differential test (sync-mysql-semantics) holds equal to MariaDB.
 */
let server: PrivateMariadb;
let api: Harness;
let call: ReturnType<typeof jsonClient>;
let cdcId: string;
let copyId: string;

const COLUMNS = `id int NOT NULL, v varchar(20), w varchar(20) COLLATE utf8mb4_bin, n decimal(65,30), small decimal(10,2),
  big bigint unsigned, i tinyint, at datetime(6), ts timestamp(3) NULL DEFAULT NULL, d date, t time(2),
  e enum('b','a','it''s'), s set('x','y','z'), b bit(10), y year, bin binary(4), blb blob, j json, f float,
  dbl double, l varchar(12) CHARACTER SET latin1, lt text CHARACTER SET latin1, g varchar(8) CHARACTER SET greek,
  h text CHARACTER SET hebrew, m varchar(8) CHARACTER SET macroman, k char(4) CHARACTER SET dec8, u uuid, i4 inet4, i6 inet6, gz varchar(20) CHARACTER SET greek COMPRESSED, lz text CHARACTER SET latin1 COMPRESSED,
  uz text COMPRESSED, bz blob COMPRESSED, PRIMARY KEY (id)`;

const EDGES = `(1, 'ABC ', 'abc', '-12345678901234567890123456789012345.123456789012345678901234567890', 1.25,
   18446744073709551615, -128, '0000-00-00 00:00:00', '1970-01-01 00:00:01.5', '0000-00-00', '-838:59:59', 0,
   'x,z', b'1010101010', 0, 'ab', x'00ff', '{"a": [1, 2]}', 3.14, -0.0, x'41818d8f909d', x'809fe9ff', x'a1a2a4a5c1', x'afa1e0', x'bddbf041', x'a1b0c4', '00112233-4455-6677-8899-aabbccddeeff', '10.0.0.1', '::ffff:1.2.3.4', x'a1a2c1', x'41818d8f909d', REPEAT('😀 Åke ', 40), REPEAT(x'00ff', 100)),
  (2, '', '', 0, -0.01, 0, 127, '2024-02-29 23:59:59.999999', '2038-01-19 03:14:07', '2024-00-10', '838:59:59.99',
   'it''s', '', b'0', 1901, x'00000000', '', 'null', 1e38, 1.7976931348623157e308, '', 'plain', '', '', '', '', '00000000-0000-0000-0000-000000000000', '0.0.0.0', '::', '', '', '', ''),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (4, '😀 Åke', 'ß', '99999999999999999999999999999999999.999999999999999999999999999999', 99999999.99,
   9223372036854775808, 0, '1000-01-01 00:00:00', NULL, '9999-12-31', '-00:00:01', 'a', 'x,y,z', b'1111111111', 2155,
   'a"b,', x'22', '[]', -1.5e-30, 2.5e-308, x'e9c4a0', x'8e9a', 'abc', 'plain', 'x', 'y', 'ffffffff-ffff-1fff-8fff-ffffffffffff', '255.255.255.255', '2001:db8::1', 'abc', x'80', 'short', x'01')`;

beforeAll(async () => {
  server = await startPrivateMariadb();
  await server.query(
    `CREATE DATABASE shop CHARACTER SET utf8mb4;
     CREATE USER reader@'%'; GRANT SELECT ON shop.* TO reader@'%'; GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO reader@'%';
     CREATE USER plain@'%'; GRANT SELECT ON shop.* TO plain@'%';
     CREATE USER monitor@'%'; GRANT SELECT ON shop.* TO monitor@'%'; GRANT BINLOG MONITOR ON *.* TO monitor@'%';`,
  );
  await server.query(
    `CREATE TABLE items (${COLUMNS}); INSERT INTO items VALUES ${EDGES};
     CREATE TABLE quiet (id int PRIMARY KEY); INSERT INTO quiet VALUES (1);`,
    'shop',
  );
  api = await inMemory.start();
  call = jsonClient(api);
  const table = (name: string, mode: string) => ({ schema: 'shop', name, mode });
  cdcId = (await shopSource('binlog', [table('items', 'cdc'), table('quiet', 'cdc')])).id as string;
  copyId = (await shopSource('fullcopy', [table('items', 'full')])).id as string;
}, 120_000);

afterAll(async () => {
  await api?.close();
  await server?.stop();
});

/** A source of the shop database reading `tables`, as `user`. */
async function shopSource(name: string, tables: Json[], user = 'reader'): Promise<Json> {
  const source = await call('POST', '/sources', {
    connector: 'mysql',
    name,
    config: { port: server.port, database: 'shop' },
    host: server.host,
    user,
  });
  await call('PATCH', `/sources/${source.id}`, { tables });
  return source;
}

/** A source reading one table of shop by cdc, named `name`, as `user` (a user of its own by default). */
const cdcSource = (name: string, table: string, user = name): Promise<Json> =>
  shopSource(name, [{ schema: 'shop', name: table, mode: 'cdc' }], user);

/** A sync of the source, to its end, and what it says of one table of shop. */
async function tableAfterSync(sourceId: string, table: string): Promise<Json> {
  await syncEnded(api, sourceId);
  const latest = (await call('GET', `/sources/${sourceId}`)).latest_sync as Json;
  return (latest.tables as Json[]).find((t) => t.table === `shop.${table}`) as Json;
}

/** The cdc table's latest sync entry. */
async function syncCdc(): Promise<Json> {
  await syncSucceeded(api, cdcId);
  const latest = (await call('GET', `/sources/${cdcId}`)).latest_sync as Json;
  return (latest.tables as Json[]).find((t) => t.table === 'shop.items') as Json;
}

/** Both ways: every row the log-applied table has, a full copy has, and back (the sync time column aside). */
async function expectEqualToCopy(): Promise<number> {
  await syncSucceeded(api, copyId);
  const columns = [
    'id',
    'v',
    'w',
    'n',
    'small',
    'big',
    'i',
    'at',
    'ts',
    'd',
    't',
    'e',
    's',
    'b',
    'y',
    'bin',
    'blb',
    'j',
    'f',
    'dbl',
    'l',
    'lt',
    'g',
    'h',
    'm',
    'k',
    'u',
    'i4',
    'i6',
    'gz',
    'lz',
    'uz',
    'bz',
  ]
    .map((c) => `"${c}"`)
    .join(', ');
  const differ = (await run(
    api,
    `select count(*) as n from ((select ${columns} from lake.binlog.items except all select ${columns} from lake.fullcopy.items)
       union all (select ${columns} from lake.fullcopy.items except all select ${columns} from lake.binlog.items))`,
  )) as Json;
  expect(differ.data?.[0]?.n, JSON.stringify(differ.error ?? differ)).toBe(0);
  const counted = (await run(api, 'select count(*) as n from lake.binlog.items')) as Json;
  return counted.data[0].n as number;
}

/**
 * Purges the log files before `file`. MariaDB keeps a file until its binlog checkpoint passes it (InnoDB has made its
 * commits durable, up to a second later here), so the purge is asked again until it is done.
 */
async function purgeBefore(file: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    await server.query(`PURGE BINARY LOGS TO '${file}'`);
    const kept = (await server.query('SHOW BINARY LOGS')) as { Log_name: string }[];
    if (kept.every((log) => log.Log_name >= file)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the log files before ${file} were never purged`);
}

describe('a MariaDB cdc table', () => {
  it('is copied whole at its first sync', async () => {
    const table = await syncCdc();
    expect(table).toMatchObject({ phase: 'committed', completed: 4 });
    expect(await expectEqualToCopy()).toBe(4);
  });

  it('takes inserts, updates, a changed key and deletes from the log, every edge value as a copy reads it', async () => {
    await server.query(
      `INSERT INTO items VALUES ${EDGES.replace(/\((\d+),/g, (_m, id: string) => `(${Number(id) + 10},`)};
       UPDATE items SET v = 'abc', n = n + 1, t = '12:00:00' WHERE id = 2;
       UPDATE items SET id = 100 WHERE id = 3;
       DELETE FROM items WHERE id = 4;
       UPDATE items SET e = 'a', s = 'y' WHERE id = 11;`,
      'shop',
    );
    const table = await syncCdc();
    expect(table).toMatchObject({ phase: 'committed', changes: { inserts: 4, updates: 3, deletes: 1 } });
    expect(await expectEqualToCopy()).toBe(7);
    // MySQL's latin1 is Windows-1252 with its five unassigned bytes as the C1 controls of the same number, as the
    // server converts it: the log's bytes read the same (zongji's codec had made them U+FFFD).
    const latin1 = (await run(api, 'select l, lt from lake.binlog.items where id = 11')) as Json;
    expect(latin1.data).toEqual([{ l: 'A\u0081\u008d\u008f\u0090\u009d', lt: '\u20ac\u0178\u00e9\u00ff' }]);
  });

  it('applies nothing twice when no change came, and a TRUNCATE empties the table before the rows after it', async () => {
    const quiet = await syncCdc();
    expect(quiet).toMatchObject({ phase: 'committed', changes: { inserts: 0, updates: 0, deletes: 0 } });
    expect(await expectEqualToCopy()).toBe(7);
    await server.query(
      `INSERT INTO items (id, v) VALUES (50, 'gone'); TRUNCATE TABLE items; INSERT INTO items (id, v, n) VALUES (60, 'after', 1.5);`,
      'shop',
    );
    await syncCdc();
    expect(await expectEqualToCopy()).toBe(1);
    // As MariaDB logs it with a lock wait (it was read as no TRUNCATE, and the lake kept the rows). WAIT, not
    // NOWAIT: the syncs just ended may still hold their read's lock on the table for a moment as their connections close.
    await server.query(
      `INSERT INTO items (id, v) VALUES (51, 'gone'); TRUNCATE TABLE items WAIT 10; INSERT INTO items (id, v, n) VALUES (60, 'after', 1.5);`,
      'shop',
    );
    await syncCdc();
    expect(await expectEqualToCopy()).toBe(1);
  });

  it('reads the table whole again when its columns change, then takes changes in the new shape', async () => {
    await server.query(
      `ALTER TABLE items ADD COLUMN extra varchar(10) DEFAULT 'x'; INSERT INTO items (id, v, extra) VALUES (61, 'new', 'y');`,
      'shop',
    );
    // Copied (no change applied: the insert is in the copy), not merged from the log.
    expect(await syncCdc()).toMatchObject({
      phase: 'committed',
      completed: 2,
      changes: { inserts: 0, updates: 0, deletes: 0 },
    });
    await server.query(`UPDATE items SET extra = 'z' WHERE id = 60; INSERT INTO items (id) VALUES (62);`, 'shop');
    expect(await syncCdc()).toMatchObject({ changes: { inserts: 1, updates: 1, deletes: 0 } });
    const extra = (await run(api, 'select id, extra from lake.binlog.items order by id')) as Json;
    expect(extra.data).toEqual([
      { id: 60, extra: 'z' },
      { id: 61, extra: 'y' },
      { id: 62, extra: 'x' },
    ]);
  });

  it('moves a quiet table on with the log, and reads tables whole when the log their position is in was purged', async () => {
    const quietSyncedAt = async (): Promise<string> =>
      ((await run(api, 'select _synced_at::VARCHAR as at from lake.binlog.quiet')) as Json).data[0].at as string;
    const logs = async (): Promise<string> =>
      ((await server.query('SHOW MASTER STATUS')) as { File: string }[])[0]?.File as string;
    const copiedAt = await quietSyncedAt();
    // The log passes to a new file: the quiet table's position follows it, though it had no change.
    await server.query(`FLUSH BINARY LOGS; INSERT INTO items (id) VALUES (70);`, 'shop');
    expect(await syncCdc()).toMatchObject({ changes: { inserts: 1, updates: 0, deletes: 0 } });
    await purgeBefore(await logs());
    await server.query(`INSERT INTO items (id) VALUES (71);`, 'shop');
    expect(await syncCdc()).toMatchObject({ changes: { inserts: 1, updates: 0, deletes: 0 } });
    expect(await quietSyncedAt()).toBe(copiedAt);
    // Both positions' file purged: both tables are read whole (a copy's rows carry this sync's time).
    await server.query(`FLUSH BINARY LOGS; INSERT INTO items (id) VALUES (72);`, 'shop');
    await purgeBefore(await logs());
    expect(await syncCdc()).toMatchObject({
      phase: 'committed',
      completed: 6,
      changes: { inserts: 0, updates: 0, deletes: 0 },
    });
    expect(await quietSyncedAt()).not.toBe(copiedAt);
    expect(await expectEqualToCopy()).toBe(6);
  });

  it('refuses a table with text in a character set of several bytes a character other than Unicode, saying what to do', async () => {
    // sjis's 0x815F is `\` to MySQL and `＼` to the log's decoder: such text could not be read as a copy reads it.
    await server.query(
      `CREATE TABLE jp (id int PRIMARY KEY, s varchar(10) CHARACTER SET sjis); INSERT INTO jp VALUES (1, x'815f');`,
      'shop',
    );
    const source = await cdcSource('jp', 'jp', 'reader');
    expect(await tableAfterSync(source.id as string, 'jp')).toMatchObject({
      phase: 'failed',
      error:
        'cdc cannot read text in the sjis character set (s) from the binary log as the server converts it; sync the table incremental or in full',
    });
  });

  it('refuses a system-versioned table, whose log holds history rows a copy never reads, saying what to do', async () => {
    await server.query(
      `CREATE TABLE hist (id int PRIMARY KEY, v int) WITH SYSTEM VERSIONING; INSERT INTO hist VALUES (1, 1);`,
      'shop',
    );
    const source = await cdcSource('hist', 'hist', 'reader');
    expect(await tableAfterSync(source.id as string, 'hist')).toMatchObject({
      phase: 'failed',
      error: expect.stringMatching(
        /^cdc cannot follow a system-versioned table: .*sync the table incremental or in full$/,
      ),
    });
  });

  it('fails a cdc table whose key column is gone with what to do, and follows it again once the key is set', async () => {
    await server.query(
      `CREATE TABLE rk (id int PRIMARY KEY, code int NOT NULL, v int); INSERT INTO rk VALUES (1, 101, 1), (2, 102, 2);`,
      'shop',
    );
    const source = await cdcSource('rk', 'rk', 'reader');
    const id = source.id as string;
    expect(await tableAfterSync(id, 'rk')).toMatchObject({ phase: 'committed' });
    await server.query(`ALTER TABLE rk DROP PRIMARY KEY, DROP COLUMN id, ADD PRIMARY KEY (code)`, 'shop');
    expect(await tableAfterSync(id, 'rk')).toMatchObject({
      phase: 'failed',
      error: expect.stringMatching(/^its primary key names a column the table does not have \(id\); set the key again/),
    });
    await call('PATCH', `/sources/${id}`, { tables: [{ schema: 'shop', name: 'rk', primary_key: ['code'] }] });
    expect(await tableAfterSync(id, 'rk')).toMatchObject({ phase: 'committed' });
    await server.query(`UPDATE rk SET v = 9 WHERE code = 102; DELETE FROM rk WHERE code = 101`, 'shop');
    expect(await tableAfterSync(id, 'rk')).toMatchObject({ phase: 'committed', changes: { updates: 1, deletes: 1 } });
    expect((await run(api, 'select code, v from lake.rk.rk order by code')).data).toEqual([{ code: 102, v: 9 }]);
  });

  it('empties the table at a DROP and CREATE among its changes, and reads it whole after a table is renamed into its place', async () => {
    await server.query(
      `CREATE TABLE tmp LIKE items; DROP TABLE items; CREATE TABLE items LIKE tmp; DROP TABLE tmp;
       INSERT INTO items (id, v) VALUES (80, 'after the drop');`,
      'shop',
    );
    expect(await syncCdc()).toMatchObject({ phase: 'committed', changes: { inserts: 1, updates: 0, deletes: 0 } });
    expect(await expectEqualToCopy()).toBe(1);
    await server.query(
      `CREATE TABLE swap LIKE items; INSERT INTO swap (id, v) VALUES (90, 'swapped'), (91, 'in');
       RENAME TABLE items TO old_items, swap TO items; DROP TABLE old_items;`,
      'shop',
    );
    await syncEnded(api, cdcId);
    const latest = (await call('GET', `/sources/${cdcId}`)).latest_sync as Json;
    expect((latest.tables as Json[]).find((t) => t.table === 'shop.items')).toMatchObject({
      phase: 'failed',
      error: expect.stringMatching(/replaced at the source .* the next sync reads it whole/),
    });
    expect(await syncCdc()).toMatchObject({
      phase: 'committed',
      completed: 2,
      changes: { inserts: 0, updates: 0, deletes: 0 },
    });
    expect(await expectEqualToCopy()).toBe(2);
  });

  it('refuses a table a foreign key changes by cascade (not in the log), saying what to do', async () => {
    await server.query(
      `CREATE TABLE owners (id int PRIMARY KEY); CREATE TABLE pets (id int PRIMARY KEY, owner int,
         FOREIGN KEY (owner) REFERENCES owners (id) ON DELETE CASCADE);
       INSERT INTO owners VALUES (1); INSERT INTO pets VALUES (10, 1);`,
      'shop',
    );
    const cascaded = await shopSource('cascaded', [
      { schema: 'shop', name: 'pets', mode: 'cdc' },
      { schema: 'shop', name: 'owners', mode: 'cdc' },
    ]);
    // As read from the log, a DELETE of owner 1 takes pet 10 with it at the source and never in the lake.
    expect(await tableAfterSync(cascaded.id as string, 'pets')).toMatchObject({
      phase: 'failed',
      error: expect.stringMatching(/foreign key \(`pets_ibfk_1` ON DELETE CASCADE\).*incremental or in full/),
    });
    const latest = (await call('GET', `/sources/${cascaded.id}`)).latest_sync as Json;
    expect((latest.tables as Json[]).find((t) => t.table === 'shop.owners')?.phase).toBe('committed');
  });

  it('reads a table whole after a partition of it is dropped: its rows went with no row event', async () => {
    await server.query(
      `CREATE TABLE parts (id int PRIMARY KEY, v varchar(10)) PARTITION BY RANGE (id)
         (PARTITION old VALUES LESS THAN (100), PARTITION recent VALUES LESS THAN MAXVALUE);
       INSERT INTO parts VALUES (1, 'old'), (2, 'old'), (150, 'recent');`,
      'shop',
    );
    const parted = await shopSource('parted', [{ schema: 'shop', name: 'parts', mode: 'cdc' }]);
    const rows = async (): Promise<Json[]> =>
      (await run(api, 'select id from lake.parted.parts order by id')).data as Json[];
    expect((await tableAfterSync(parted.id as string, 'parts')).phase).toBe('committed');
    await server.query(`INSERT INTO parts VALUES (160, 'recent'); ALTER TABLE parts DROP PARTITION old;`, 'shop');
    expect(await tableAfterSync(parted.id as string, 'parts')).toMatchObject({
      phase: 'failed',
      error: expect.stringMatching(/partition dropped, truncated or exchanged.*the next sync reads it whole/),
    });
    expect(await tableAfterSync(parted.id as string, 'parts')).toMatchObject({ phase: 'committed' });
    expect(await rows()).toEqual([{ id: 150 }, { id: 160 }]);
    // A session that logs its changes as statements (the server's ROW format does not stop it): no row event either.
    await server.query(
      `SET SESSION binlog_format = 'STATEMENT'; INSERT INTO parts VALUES (170, 'stmt'); SET SESSION binlog_format = 'ROW';`,
      'shop',
    );
    expect(await tableAfterSync(parted.id as string, 'parts')).toMatchObject({
      phase: 'failed',
      error: expect.stringMatching(/a change logged as a statement.*the next sync reads it whole/),
    });
    expect(await tableAfterSync(parted.id as string, 'parts')).toMatchObject({ phase: 'committed' });
    expect(await rows()).toEqual([{ id: 150 }, { id: 160 }, { id: 170 }]);
    // A session that logs rows without all their columns (binlog_row_image MINIMAL): the rest would have read NULL.
    await server.query(
      `SET SESSION binlog_row_image = 'MINIMAL'; UPDATE parts SET v = 'minimal' WHERE id = 150; SET SESSION binlog_row_image = 'FULL';`,
      'shop',
    );
    expect(await tableAfterSync(parted.id as string, 'parts')).toMatchObject({
      phase: 'failed',
      error: expect.stringMatching(/rows logged without all their columns.*the next sync reads it whole/),
    });
    expect(await tableAfterSync(parted.id as string, 'parts')).toMatchObject({ phase: 'committed' });
    expect((await run(api, 'select id, v from lake.parted.parts order by id')).data).toEqual([
      { id: 150, v: 'minimal' },
      { id: 160, v: 'recent' },
      { id: 170, v: 'stmt' },
    ]);
    // An XA transaction is logged when it is prepared; one rolled back after must leave nothing.
    await server.query(
      `XA START 'x1'; INSERT INTO parts VALUES (180, 'xa'); XA END 'x1'; XA PREPARE 'x1'; XA ROLLBACK 'x1';`,
      'shop',
    );
    expect(await tableAfterSync(parted.id as string, 'parts')).toMatchObject({
      phase: 'failed',
      error: expect.stringMatching(/an XA transaction rolled back.*the next sync reads it whole/),
    });
    expect(await tableAfterSync(parted.id as string, 'parts')).toMatchObject({ phase: 'committed' });
    expect(await rows()).toEqual([{ id: 150 }, { id: 160 }, { id: 170 }]);
  });

  it('fails with what to grant when the user may not read the log, and with what to set for statement logging', async () => {
    const created = await cdcSource('plain', 'items');
    const failedWith = async (): Promise<string> => {
      await syncEnded(api, created.id as string);
      const latest = (await call('GET', `/sources/${created.id}`)).latest_sync as Json;
      const table = (latest.tables as Json[]).find((t) => t.table === 'shop.items') as Json;
      expect(table.phase).toBe('failed');
      return table.error as string;
    };
    expect(await failedWith()).toMatch(/may not read the binary log.*GRANT REPLICATION CLIENT, REPLICATION SLAVE/);
    // May read where the log stands but not the log itself: the copy is made, and the first changes say what to grant.
    const monitor = await cdcSource('monitor', 'quiet');
    await syncSucceeded(api, monitor.id as string);
    await server.query('INSERT INTO quiet VALUES (2)', 'shop');
    await syncEnded(api, monitor.id as string);
    const monitored = ((await call('GET', `/sources/${monitor.id}`)).latest_sync.tables as Json[]).find(
      (t) => t.table === 'shop.quiet',
    ) as Json;
    expect(monitored.phase).toBe('failed');
    expect(monitored.error).toMatch(/may not read the binary log: GRANT REPLICATION CLIENT, REPLICATION SLAVE/);
    await server.query(`SET GLOBAL binlog_format = 'STATEMENT'`);
    try {
      expect(await failedWith()).toMatch(/logs changes in STATEMENT format: cdc needs binlog_format=ROW/);
    } finally {
      await server.query(`SET GLOBAL binlog_format = 'ROW'`);
    }
  });
});
