import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_DEFAULTS } from '../../src/service/net/outbound.js';
import { SYNC_DEFAULTS } from '../../src/service/syncs/settings.js';
import { startPrivateMariadb, type PrivateMariadb } from '../helpers/mysql.js';
import { jobWhen, jsonClient, run, syncEnded, syncSucceeded, type Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * A MariaDB that compresses its binary log's events (`log_bin_compress=ON`, every event of 10 bytes or more): a cdc
 * table takes its changes from compressed row and statement events as from plain ones, and a compressed event is
 * bounded as a plain one is on the wire. A few kilobytes of the log may inflate to gigabytes: what an event inflates
 * to is held to the longest record a sync takes (1 MiB here) while it inflates, not measured after.
 */
let server: PrivateMariadb;
let api: Harness;
let call: ReturnType<typeof jsonClient>;
let sourceId: string;

beforeAll(async () => {
  server = await startPrivateMariadb(['--log-bin-compress', '--log-bin-compress-min-len=10']);
  await server.query(
    `CREATE DATABASE shop CHARACTER SET utf8mb4;
     CREATE USER reader@'%'; GRANT SELECT ON shop.* TO reader@'%'; GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO reader@'%';`,
  );
  await server.query(
    `CREATE TABLE items (id int PRIMARY KEY, v varchar(100), body longblob);
     INSERT INTO items VALUES (1, 'one', REPEAT('a', 1000)), (2, 'two', NULL), (3, 'three', x'00ff');`,
    'shop',
  );
  api = await inMemory.start({
    services: { outbound: LOCAL_DEFAULTS, syncSettings: { ...SYNC_DEFAULTS, maxRecordBytes: 1 << 20 } },
  });
  call = jsonClient(api);
  const source = await call('POST', '/sources', {
    connector: 'mysql',
    name: 'packed',
    config: { port: server.port, database: 'shop' },
    host: server.host,
    user: 'reader',
  });
  sourceId = source.id as string;
  await call('PATCH', `/sources/${sourceId}`, { tables: [{ schema: 'shop', name: 'items', mode: 'cdc' }] });
}, 120_000);

afterAll(async () => {
  await api?.close();
  await server?.stop();
});

/** The lake's rows of the table, in key order, as `id:v:length of body`. */
async function lakeRows(): Promise<string[]> {
  const rows = (await run(
    api,
    "select id || ':' || coalesce(v, '-') || ':' || coalesce(octet_length(body)::varchar, '-') as r from lake.packed.items order by id",
  )) as Json;
  return (rows.data as Json[]).map((row) => row.r as string);
}

/** MariaDB's rows of the table, in the same form. */
async function sourceRows(): Promise<string[]> {
  const rows = (await server.query(
    "SELECT CONCAT(id, ':', COALESCE(v, '-'), ':', COALESCE(LENGTH(body), '-')) AS r FROM items ORDER BY id",
    'shop',
  )) as { r: string }[];
  return rows.map((row) => row.r);
}

describe('a MariaDB cdc table whose binary log is compressed', () => {
  it('takes inserts, updates, deletes and a TRUNCATE from compressed events', async () => {
    await syncSucceeded(api, sourceId);
    expect(await lakeRows()).toEqual(await sourceRows());
    const [compression] = (await server.query("SHOW VARIABLES LIKE 'log_bin_compress'")) as { Value: string }[];
    expect(compression?.Value).toBe('ON');
    await server.query(
      `INSERT INTO items VALUES (4, 'four', REPEAT('xy', 5000)), (5, 'five', NULL);
       UPDATE items SET v = 'uno', body = REPEAT('b', 2000) WHERE id = 1;
       UPDATE items SET id = 20 WHERE id = 2;
       DELETE FROM items WHERE id = 3;`,
      'shop',
    );
    await syncSucceeded(api, sourceId);
    expect(await lakeRows()).toEqual(['1:uno:2000', '4:four:10000', '5:five:-', '20:two:-']);
    expect(await lakeRows()).toEqual(await sourceRows());
    await server.query(
      `INSERT INTO items VALUES (6, 'gone', NULL); TRUNCATE TABLE items; INSERT INTO items VALUES (7, 'after the truncate', NULL);`,
      'shop',
    );
    await syncSucceeded(api, sourceId);
    expect(await lakeRows()).toEqual(['7:after the truncate:-']);
  }, 60_000);

  it('fails the sync at the record cap when an event inflates past it, and the table keeps what it had', async () => {
    // 8 MiB of one letter: an event of about 8 KB on the wire, well under the 1 MiB the wire allows.
    await server.query(`INSERT INTO items VALUES (8, 'huge', REPEAT('z', 8 << 20))`, 'shop');
    const job = await syncEnded(api, sourceId);
    expect(job.status, JSON.stringify(job)).toBe('failed');
    const latest = (await call('GET', `/sources/${sourceId}`)).latest_sync as Json;
    const table = (latest.tables as Json[]).find((t) => t.table === 'shop.items') as Json;
    expect(table.error ?? JSON.stringify(table)).toMatch(
      /a compressed event of the source's binary log \(log_bin_compress\) inflates past 1 MiB, the longest a sync takes \(LAKE_SYNC_MAX_RECORD_BYTES\)/,
    );
    expect(await lakeRows()).toEqual(['7:after the truncate:-']);
    // The next sync meets the same event and fails alike; a full refresh reads the table whole (the row gone by then)
    // and takes the log on from where it stands.
    expect((await syncEnded(api, sourceId)).status).toBe('failed');
    await server.query('DELETE FROM items WHERE id = 8', 'shop');
    const refreshed = await call('POST', `/sources/${sourceId}/sync`, { full_refresh: true });
    expect((await jobWhen((path) => call('GET', path), refreshed.id as string)).status).toBe('succeeded');
    await server.query(`INSERT INTO items VALUES (9, 'later', REPEAT('k', 4000))`, 'shop');
    await syncSucceeded(api, sourceId);
    expect(await lakeRows()).toEqual(['7:after the truncate:-', '9:later:4000']);
  }, 60_000);
});
