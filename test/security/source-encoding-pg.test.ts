import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useLogicalSource } from '../helpers/postgres.js';
import { jsonClient, run, syncEnded, type Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * A PostgreSQL source whose database is not UTF-8 (LATIN1 here): its text reaches lake as the source's own
 * characters by every mode, a copy and the changes of a cdc table alike, since both are read in the session's
 * client encoding (UTF-8), which the server converts to.
 */
describe('a PostgreSQL source database in LATIN1', () => {
  const source = useLogicalSource(
    `CREATE DATABASE l1 ENCODING 'LATIN1' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C'`,
  );
  let api: Harness;
  let call: ReturnType<typeof jsonClient>;
  let l1: pg.Client;
  beforeAll(async () => {
    l1 = new pg.Client({ connectionString: source.server.url.replace(/\/postgres$/, '/l1') });
    await l1.connect();
    await l1.query(
      `CREATE TABLE t (id int PRIMARY KEY, v text, c char(3)); INSERT INTO t VALUES (1, 'Åke ß é', 'ÿ'), (2, E'\\u0085\\u00a0', NULL)`,
    );
    api = await inMemory.start();
    call = jsonClient(api);
  });
  afterAll(async () => {
    await l1?.end();
    await api?.close();
  });

  const sourceRows = async (): Promise<Json[]> =>
    (await l1.query('SELECT id, v, c::text AS c FROM t ORDER BY id')).rows as Json[];
  const lakeRows = async (schema: string): Promise<Json[]> =>
    (await run(api, `select id, v, c from ${schema}.t order by id`)).data as Json[];

  for (const mode of ['full', 'cdc'] as const) {
    it(`reads its text as the source's characters (${mode})`, async () => {
      const schema = `latin_${mode}`;
      const created = await call('POST', '/sources', source.sourceBody(schema, { database: 'l1' }));
      await call('PATCH', `/sources/${created.id}`, { tables: [{ schema: 'public', name: 't', mode }] });
      expect((await syncEnded(api, created.id as string)).status).toBe('succeeded');
      expect(await lakeRows(schema)).toEqual(await sourceRows());
      await l1.query(
        `INSERT INTO t VALUES (${mode === 'full' ? 10 : 20}, 'ñandú ${mode}', 'Ø'); UPDATE t SET v = v || 'ü'`,
      );
      expect((await syncEnded(api, created.id as string)).status).toBe('succeeded');
      expect(await lakeRows(schema)).toEqual(await sourceRows());
    }, 60_000);
  }
});
