import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_DEFAULTS } from '../../src/service/net/outbound.js';
import { SYNC_DEFAULTS } from '../../src/service/syncs/settings.js';
import { startPrivateMariadb, type PrivateMariadb } from '../helpers/mysql.js';
import { jobWhen, jsonClient, run, type Json } from '../helpers/queries.js';
import { writeSelfSigned } from '../helpers/certificates.js';
import { tempDir } from '../helpers/temp.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * The wire bounds of decision 62 watch a MySQL connection beside mysql2 and follow it when it moves onto a TLS
 * socket; the binary log reader's two connections are bounded the same way. A MariaDB of the test's own that takes
 * its tenant only over TLS (`REQUIRE SSL`, a self-signed certificate): a full sync, a sync of changes from the
 * binary log, and a row past the record cap all go over TLS as they go in the clear.
 */
describe('a MySQL source reached over TLS', () => {
  let server: PrivateMariadb;
  let api: Harness;
  let call: ReturnType<typeof jsonClient>;

  beforeAll(async () => {
    const certs = tempDir('lake-mariadb-tls');
    writeSelfSigned(join(certs, 'key.pem'), join(certs, 'cert.pem'));
    server = await startPrivateMariadb([
      `--ssl-cert=${join(certs, 'cert.pem')}`,
      `--ssl-key=${join(certs, 'key.pem')}`,
    ]);
    await server.query(
      `CREATE DATABASE shop CHARACTER SET utf8mb4;
       CREATE USER tenant@'%' IDENTIFIED BY 'pw' REQUIRE SSL;
       CREATE USER plain@'%' IDENTIFIED BY 'pw'; GRANT SELECT ON shop.* TO plain@'%';
       GRANT SELECT ON shop.* TO tenant@'%'; GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO tenant@'%';`,
    );
    await server.query(
      `CREATE TABLE items (id int PRIMARY KEY, v varchar(200));
       INSERT INTO items SELECT seq, REPEAT('x', 100) FROM seq_1_to_200000;
       CREATE TABLE wide (id int PRIMARY KEY, body longtext);
       INSERT INTO wide VALUES (1, REPEAT('y', 3 * 1024 * 1024));
       CREATE TABLE grows (id int PRIMARY KEY, body longtext);
       INSERT INTO grows VALUES (1, 'small');`,
      'shop',
    );
    api = await inMemory.start({
      services: { outbound: LOCAL_DEFAULTS, syncSettings: { ...SYNC_DEFAULTS, maxRecordBytes: 1 << 20 } },
    });
    call = jsonClient(api);
  }, 120_000);

  afterAll(async () => {
    // The server first: a sync still reading from it (a test that failed) then ends, and the harness can close.
    await server?.stop();
    await api?.close();
  });

  const source = async (name: string, sslMode: string, tables?: object[], user = 'tenant'): Promise<string> => {
    const created = await call('POST', '/sources', {
      connector: 'mysql',
      name,
      host: server.host,
      user,
      password: 'pw',
      config: { port: server.port, database: 'shop', ssl_mode: sslMode },
    });
    expect(created.id, JSON.stringify(created)).toBeDefined();
    if (tables) await call('PATCH', `/sources/${created.id}`, { tables });
    return created.id as string;
  };
  /** Syncs one table of the source and waits for the sync to succeed. */
  const syncedOnly = async (id: string, table: string): Promise<void> => {
    const sync = await call('POST', `/sources/${id}/sync`, { tables: [table] });
    const job = await jobWhen((path) => call('GET', path), sync.id as string, undefined, 30_000);
    expect(job.status, JSON.stringify(job)).toBe('succeeded');
  };
  /** Syncs one table, which fails within seconds with the record cap's words (and the sync with it). */
  const failsAtTheCap = async (id: string, name: string): Promise<void> => {
    const sync = await call('POST', `/sources/${id}/sync`, { tables: [name] });
    const job = await jobWhen((path) => call('GET', path), sync.id as string, undefined, 15_000);
    expect(job.status).toBe('failed');
    const table = await tableOf(id, name);
    expect(table.phase).toBe('failed');
    expect(table.error).toMatch(/a row of the source is larger than 1 MiB, the longest a sync takes/);
  };
  const tableOf = async (id: string, table: string): Promise<Json> => {
    const latest = (await call('GET', `/sources/${id}`)).latest_sync as Json;
    return (latest.tables as Json[]).find((t) => t.table === table) as Json;
  };

  it('refuses the tenant in the clear: the server takes it only over TLS', async () => {
    const id = await source('clear', 'disable');
    const tested = await call('POST', `/sources/${id}/test`);
    expect(tested.ok).toBe(false);
  }, 30_000);

  it('syncs a table whole, then its changes from the binary log, both over TLS', async () => {
    const id = await source('tls', 'require', [{ schema: 'shop', name: 'items', mode: 'cdc' }]);
    expect((await call('POST', `/sources/${id}/test`)).ok).toBe(true);
    await syncedOnly(id, 'shop.items');
    const copied = await run(api, 'select count(*) as n, sum(length(v)) as chars from lake.tls.items');
    expect(copied.status, JSON.stringify(copied.error)).toBe('succeeded');
    expect(copied.data[0]).toMatchObject({ n: 200000, chars: '20000000' });
    await server.query(
      "UPDATE items SET v = 'changed' WHERE id % 100 = 0; DELETE FROM items WHERE id > 199990; INSERT INTO items VALUES (300000, 'new')",
      'shop',
    );
    await syncedOnly(id, 'shop.items');
    expect((await tableOf(id, 'shop.items')).phase).toBe('committed');
    const changed = await run(
      api,
      "select count(*) as n, count(*) filter (where v = 'changed') as changed, max(id) as top from lake.tls.items",
    );
    expect(changed.data[0]).toEqual({ n: 199991, changed: 1999, top: 300000 });
  }, 90_000);

  it("a change in the binary log past the record cap fails its table with the cap's words, over TLS", async () => {
    const id = await source('grows', 'require', [{ schema: 'shop', name: 'grows', mode: 'cdc' }]);
    await syncedOnly(id, 'shop.grows');
    await server.query("UPDATE grows SET body = REPEAT('z', 3 * 1024 * 1024)", 'shop');
    await failsAtTheCap(id, 'shop.grows');
  }, 45_000);

  // The wire bound closes the connection under the streamed rows, which mysql2 tells the connection alone: the read
  // waited for ever (the idle timeout is the socket's, and the socket was gone), in the clear as over TLS.
  it.each([
    ['over TLS', 'require', 'tenant'],
    ['in the clear', 'disable', 'plain'],
  ])(
    "a row past the record cap fails its table with the cap's words, %s",
    async (_how, sslMode, user) => {
      const id = await source(`wide ${sslMode}`, sslMode, [{ schema: 'shop', name: 'wide', mode: 'full' }], user);
      await failsAtTheCap(id, 'shop.wide');
    },
    30_000,
  );
});
