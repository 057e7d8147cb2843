import { readdirSync } from 'node:fs';
import pg from 'pg';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WAITING_LOADS } from '../../src/service/syncs/load-queue.js';
import { syncMysql } from '../../src/service/syncs/mysql-extract.js';
import { syncPostgres } from '../../src/service/syncs/postgres-extract.js';
import { SYNC_DEFAULTS, type SyncSettings } from '../../src/service/syncs/settings.js';
import type { ExtractionContext, TableTask } from '../../src/service/syncs/types.js';
import { useTestMysqlDatabase } from '../helpers/mysql.js';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { jsonClient, run, type Json } from '../helpers/queries.js';
import { tempDir } from '../helpers/temp.js';
import { inMemory, type Harness } from '../helpers/transports.js';
import { TEST_STORE, testHomeOptions } from '../helpers/test-store.js';

const ROWS = 200_000;
/** Small segments, many of them: each load costs DuckDB more than the source takes to send the next. */
const SEGMENT_ROWS = 4_000;

/**
 * A sync reads no faster than it loads. Loads run one at a time, and a load can take longer than the source takes
 * to send the next segment (small segments here; a slow disk or an object store in production). Found on MySQL:
 * its reads never waited for the loads, so the segments piled up in staging (here 30 and more of the table's 50 at
 * once) towards the table's whole size, and a table larger than LAKE_SYNC_MAX_TABLE_STAGING_BYTES failed at the cap
 * where the same table from PostgreSQL synced. Now both wait once MAX_WAITING_LOADS segments are staged.
 */
describe('a sync whose loads are slower than its reads', () => {
  const mysqlDb = useTestMysqlDatabase();
  const pgDb = useTestDatabase();
  let api: Harness;
  const homeDir = join(tempDir('lake-home'), 'home');
  beforeAll(async () => {
    await mysqlDb.query(
      `CREATE TABLE events (id int PRIMARY KEY, account int NOT NULL, note varchar(40));
       INSERT INTO events SELECT seq, seq % 1000, md5(seq) FROM seq_1_to_${ROWS};
       CREATE TABLE later (id int PRIMARY KEY, note varchar(40));
       INSERT INTO later SELECT seq, md5(seq) FROM seq_1_to_600000`,
    );
    await adminQuery(
      `CREATE TABLE public.events (id int PRIMARY KEY, account int NOT NULL, note varchar(40));
       INSERT INTO public.events SELECT g, g % 1000, md5(g::text) FROM generate_series(1, ${ROWS}) g;
       GRANT SELECT ON public.events TO ${pgDb.reader}`,
      pgDb.database,
    );
    api = await inMemory.start({ homeDir });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
  });

  const request = (method: string, path: string, body?: object): Promise<Json> => jsonClient(api)(method, path, body);

  /**
   * Syncs the source's `tables` (`events` unless given) in process with small segments, into lake tables of the same
   * names; answers each table's last phase and the most files staged at once.
   */
  const syncCounting = async (
    sourceId: string,
    extract: (context: ExtractionContext & { sourceId: string; settings: never }) => Promise<unknown>,
    options: { tables?: string[]; limits?: SyncSettings } = {},
  ): Promise<{ mostStaged: number; phases: Map<string, string> }> => {
    const organizationId = api.home.organization.id;
    const record = await api.services.sources.store.get(organizationId, sourceId);
    const tasks: TableTask[] = (options.tables ?? ['events']).map((name) => {
      const table = record?.tables.find((t) => t.name === name);
      if (!table) throw new Error(`no table ${name}`);
      return {
        table,
        key: `${table.schema}.${name}`,
        lakeSchema: 'staged',
        lakeTable: name,
        incremental: false,
        softDeletes: false,
      };
    });
    const stagingDir = join(tempDir('lake-backpressure'), 'staging');
    let mostStaged = 0;
    const phases = new Map<string, string>();
    await extract({
      sourceId,
      settings: (await api.services.sources.connectSettings(record as NonNullable<typeof record>)) as never,
      tasks,
      states: new Map(),
      lake: api.services.lake,
      organizationId,
      stagingDir,
      syncedAt: new Date().toISOString(),
      reporter: {
        phase: (task, next) => void phases.set(task.lakeTable, next),
        // Looked at as rows arrive: what is on disk while the source is read.
        rows: () => {
          const staged = readdirSync(stagingDir).filter((name) => name.endsWith('.csv')).length;
          mostStaged = Math.max(mostStaged, staged);
        },
        schemaChange: () => undefined,
      },
      signal: new AbortController().signal,
      limits: options.limits ?? SYNC_DEFAULTS,
      segmentRows: SEGMENT_ROWS,
    });
    return { mostStaged, phases };
  };

  const expectWhole = async (): Promise<void> => {
    const rows = await run(
      api,
      'select count(*) as n, count(distinct id) as k, sum(account)::bigint::text as s from lake.staged.events',
    );
    expect(rows.data).toEqual([{ n: ROWS, k: ROWS, s: String((ROWS / 1000) * ((999 * 1000) / 2)) }]);
  };

  /** A source on the test database of `connector`, read over one connection; answers its id. */
  const createSource = async (connector: 'mysql' | 'postgres', name: string): Promise<string> => {
    const db = connector === 'mysql' ? mysqlDb : pgDb;
    const source = await request('POST', '/sources', {
      connector,
      name,
      config: { port: db.port, database: db.database, sync_connections: 1 },
      host: db.host,
      user: db.reader,
    });
    return source.id as string;
  };

  const extractors = {
    mysql: (context: Parameters<typeof syncMysql>[0]) => syncMysql(context),
    postgres: (context: Parameters<typeof syncMysql>[0] & { sourceId: string }) =>
      syncPostgres({ ...context, hadSlot: false, cdcTables: [], onSlot: async () => undefined }),
  };

  for (const connector of ['mysql', 'postgres'] as const) {
    it(`${connector}: reading waits for room, so staging holds a few segments, not the table`, async () => {
      const { mostStaged, phases } = await syncCounting(
        await createSource(connector, connector),
        extractors[connector],
      );
      expect(phases.get('events')).toBe('committed');
      // The loads waiting (the one running among them) and the segment being written.
      expect(mostStaged).toBeGreaterThan(0);
      expect(mostStaged).toBeLessThanOrEqual(MAX_WAITING_LOADS + 1);
      await expectWhole();
    }, 120_000);
  }

  /**
   * Syncs `tables` of a new MySQL source over one connection, with an idle bound of 2 s, while the
   * organization's catalog lock is held from lake's metadata database for 6 s: every commit waits for it.
   */
  const syncWhileCommitsWait = async (name: string, tables: string[]): Promise<Map<string, string>> => {
    const source = await createSource('mysql', name);
    const { metadataUrl } = await testHomeOptions(homeDir);
    const holder = new pg.Client({ connectionString: metadataUrl });
    await holder.connect();
    const key = `catalog:${api.home.organization.id}`;
    await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]);
    const released = new Promise<void>((resolve) =>
      setTimeout(() => {
        void holder.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]).then(() => resolve());
      }, 6_000),
    );
    try {
      const started = Date.now();
      const { phases } = await syncCounting(source, extractors.mysql, {
        tables,
        limits: { ...SYNC_DEFAULTS, idleTimeoutMs: 2_000 },
      });
      expect(Date.now() - started).toBeGreaterThan(5_500);
      return phases;
    } finally {
      await released;
      await holder.end();
    }
  };

  // Lake's catalog commits wait on PostgreSQL's locks without holding the event loop; SQLite's wait holds it.
  describe.skipIf(TEST_STORE === 'sqlite')('the idle bound counts only a source lake waits on', () => {
    it('a read lake holds while the table before it commits is not a silent source', async () => {
      // `later`'s loads wait for `events` to commit, so its read waits for room, for seconds past the idle bound.
      // Before: the paused read was closed after 2 s as a source that sent nothing.
      const phases = await syncWhileCommitsWait('held', ['events', 'later']);
      expect(Object.fromEntries(phases)).toEqual({ events: 'committed', later: 'committed' });
      await expectWhole();
      expect((await run(api, 'select count(*) as n from lake.staged.later')).data).toEqual([{ n: 600_000 }]);
    }, 120_000);

    it('nor is the connection lake asks nothing while the last table commits', async () => {
      // Before: the idle leader was closed, and the sync failed at its last statement though the table was read.
      const phases = await syncWhileCommitsWait('idle', ['events']);
      expect(Object.fromEntries(phases)).toEqual({ events: 'committed' });
      await expectWhole();
    }, 120_000);
  });
});
