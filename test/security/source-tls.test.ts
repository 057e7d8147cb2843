import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresClient } from '../../src/service/connectors/postgres.js';
import { LOCAL_DEFAULTS } from '../../src/service/net/outbound.js';
import { SYNC_DEFAULTS } from '../../src/service/syncs/settings.js';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/postgres.js';
import { jobWhen, jsonClient, run } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * The wire bounds of decision 62 ride inside node-postgres's own reader of its socket, which it swaps for a TLS
 * socket once the server agrees to TLS, and which pg-copy-streams takes off while a COPY reads the socket itself: a
 * source reached over TLS must sync as before, and still be bounded.
 */
describe('a PostgreSQL source reached over TLS', () => {
  let server: PrivatePostgres;
  let api: Harness;
  let port = 0;

  beforeAll(async () => {
    server = await startPrivatePostgres([], { tls: true });
    port = Number(new URL(server.url).port);
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(
      "CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(1, 200000) g",
    );
    await admin.end();
    api = await inMemory.start({
      services: { outbound: LOCAL_DEFAULTS, syncSettings: { ...SYNC_DEFAULTS, maxRecordBytes: 1 << 20 } },
    });
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await server?.stop();
  });

  const settings = (): Parameters<typeof postgresClient>[0] => ({
    config: { port, database: 'postgres', ssl_mode: 'require' },
    secrets: { host: '127.0.0.1', user: 'postgres', password: 'unused' },
    tables: [],
    maxRecordBytes: 1 << 20,
  });

  it('syncs a table whole: its COPY reads the TLS socket and hands it back', async () => {
    const call = jsonClient(api);
    const source = await call('POST', '/sources', {
      connector: 'postgres',
      name: 'tls',
      host: '127.0.0.1',
      user: 'postgres',
      password: 'unused',
      config: { port, database: 'postgres', ssl_mode: 'require', sync_connections: 1 },
    });
    const sync = await call('POST', `/sources/${source.id}/sync`, { tables: ['public.t'] });
    const job = await jobWhen((path) => call('GET', path), sync.id as string, undefined, 30_000);
    expect(job.status, JSON.stringify(job)).toBe('succeeded');
    const lake = await run(api, 'select count(*) as n, sum(length(v)) as chars from lake.tls.t');
    expect(lake.status, JSON.stringify(lake.error)).toBe('succeeded');
    // A sum of bigints is a HUGEINT, which JSON carries as text.
    expect(lake.data[0]).toMatchObject({ n: 200000, chars: '20000000' });
  }, 60_000);

  it('bounds a statement answered over TLS: four of the longest rows, 8 MiB at a 1 MiB record cap', async () => {
    const client = postgresClient(settings(), 'sync');
    client.on('error', () => {});
    await client.connect();
    try {
      const tls = await client.query<{ ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
      expect(tls.rows[0]?.ssl).toBe(true);
      // A few rows, and the rows of a COPY (streamed), are taken as before, and the connection goes on after them.
      expect((await client.query('SELECT * FROM t LIMIT 20000')).rows).toHaveLength(20000);
      // The whole table in one statement is 21 MB of rows.
      await expect(client.query('SELECT * FROM t')).rejects.toThrow(
        /answered one statement with more than 8 MiB of rows/,
      );
    } finally {
      await client.end().catch(() => {});
    }
  }, 60_000);
});
