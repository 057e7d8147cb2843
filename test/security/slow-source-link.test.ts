import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_DEFAULTS } from '../../src/service/net/outbound.js';
import { useTestMysqlDatabase } from '../helpers/mysql.js';
import { adminQuery, ADMIN_URL, useTestDatabase } from '../helpers/postgres.js';
import { jsonClient, type Json } from '../helpers/queries.js';
import { startSlowLink, type SlowLink } from '../helpers/slow-link.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * A source is often across a wide-area link, where what a connection test costs is its round trips. The test
 * checked SELECT on each table with a statement of its own: 300 tables across a link of 10 ms each way took 6.5 s
 * (PostgreSQL) and 6.6 s (MariaDB), 2,000 tables would take 40 s. Now a statement checks them all (PostgreSQL) or
 * 200 at a time (MySQL), and a table the source may not read is still found.
 */
const TABLES = 300;
const DELAY_MS = 10;

let api: Harness;
let call: ReturnType<typeof jsonClient>;
const pg = useTestDatabase();
const my = useTestMysqlDatabase();
const links: SlowLink[] = [];

beforeAll(async () => {
  const create = Array.from({ length: TABLES }, (_, i) => `CREATE TABLE t${i} (id int PRIMARY KEY)`).join('; ');
  await adminQuery(`${create}; GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${pg.reader}`, pg.database);
  await my.query(create);
  api = await inMemory.start({ services: { outbound: LOCAL_DEFAULTS } });
  call = jsonClient(api);
}, 120_000);

afterAll(async () => {
  await api?.close();
  for (const link of links) await link.close();
});

/** Creates the source across a slow link to `port`; gives its id. */
async function sourceAcross(port: number, body: (linkPort: number) => object): Promise<string> {
  const link = await startSlowLink(port, DELAY_MS);
  links.push(link);
  const created = await call('POST', '/sources', body(link.port));
  expect(created.table_count).toBe(TABLES + (created.connector === 'postgres' ? 2 : 0));
  return created.id as string;
}

/** The connection test, and how long it took. */
async function timedTest(id: string): Promise<{ result: Json; ms: number }> {
  const started = Date.now();
  const result = await call('POST', `/sources/${id}/test`);
  return { result, ms: Date.now() - started };
}

describe('a source across a slow link', () => {
  it('PostgreSQL: the test checks every table in one round trip, and still finds the one it may not read', async () => {
    const id = await sourceAcross(Number(new URL(ADMIN_URL).port || 5432), (port) => ({
      connector: 'postgres',
      name: 'far pg',
      host: '127.0.0.1',
      user: pg.reader,
      config: { port, database: pg.database },
    }));
    const { result, ms } = await timedTest(id);
    expect(result).toMatchObject({ ok: true, reason: null });
    // A round trip per table was 300 × 20 ms and more; what is left is connecting and discovering.
    expect(ms).toBeLessThan(2_500);
    await adminQuery(`REVOKE SELECT ON t123 FROM ${pg.reader}`, pg.database);
    expect((await timedTest(id)).result).toMatchObject({ ok: false, reason: 'permission_denied' });
  }, 60_000);

  it('MySQL: the test checks the tables 200 to a round trip, and still finds the one it may not read', async () => {
    const id = await sourceAcross(my.port, (port) => ({
      connector: 'mysql',
      name: 'far mysql',
      host: '127.0.0.1',
      user: my.reader,
      config: { port, database: my.database },
    }));
    const { result, ms } = await timedTest(id);
    expect(result).toMatchObject({ ok: true, reason: null });
    expect(ms).toBeLessThan(2_500);
    // The reader may read the database's tables; a table it is refused is found in any batch.
    await my.query(`DROP TABLE t250`);
    expect((await timedTest(id)).result).toMatchObject({ ok: false, reason: 'permission_denied' });
  }, 60_000);
});
