import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WAITING_LOADS } from '../../src/service/syncs/load-queue.js';
import { syncMysql } from '../../src/service/syncs/mysql-extract.js';
import { syncPostgres } from '../../src/service/syncs/postgres-extract.js';
import { SYNC_DEFAULTS } from '../../src/service/syncs/settings.js';
import type { ExtractionContext, TableTask } from '../../src/service/syncs/types.js';
import { useTestMysqlDatabase } from '../helpers/mysql.js';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { jsonClient, run, type Json } from '../helpers/queries.js';
import { tempDir } from '../helpers/temp.js';
import { inMemory, type Harness } from '../helpers/transports.js';

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
  beforeAll(async () => {
    await mysqlDb.query(
      `CREATE TABLE events (id int PRIMARY KEY, account int NOT NULL, note varchar(40));
       INSERT INTO events SELECT seq, seq % 1000, md5(seq) FROM seq_1_to_${ROWS}`,
    );
    await adminQuery(
      `CREATE TABLE public.events (id int PRIMARY KEY, account int NOT NULL, note varchar(40));
       INSERT INTO public.events SELECT g, g % 1000, md5(g::text) FROM generate_series(1, ${ROWS}) g;
       GRANT SELECT ON public.events TO ${pgDb.reader}`,
      pgDb.database,
    );
    api = await inMemory.start();
  }, 120_000);
  afterAll(async () => {
    await api?.close();
  });

  const request = (method: string, path: string, body?: object): Promise<Json> => jsonClient(api)(method, path, body);

  /** Syncs the source's `events` table in process with small segments; answers the most files staged at once. */
  const syncCounting = async (
    sourceId: string,
    extract: (context: ExtractionContext & { sourceId: string; settings: never }) => Promise<unknown>,
  ): Promise<{ mostStaged: number; phase: string | undefined }> => {
    const organizationId = api.home.organization.id;
    const record = await api.services.sources.store.get(organizationId, sourceId);
    const table = record?.tables.find((t) => t.name === 'events');
    const task: TableTask = {
      table: table as NonNullable<typeof table>,
      key: `${table?.schema}.events`,
      lakeSchema: 'staged',
      lakeTable: 'events',
      incremental: false,
      softDeletes: false,
    };
    const stagingDir = join(tempDir('lake-backpressure'), 'staging');
    let mostStaged = 0;
    let phase: string | undefined;
    await extract({
      sourceId,
      settings: (await api.services.sources.connectSettings(record as NonNullable<typeof record>)) as never,
      tasks: [task],
      states: new Map(),
      lake: api.services.lake,
      organizationId,
      stagingDir,
      syncedAt: new Date().toISOString(),
      reporter: {
        phase: (_task, next) => void (phase = next),
        // Looked at as rows arrive: what is on disk while the source is read.
        rows: () => {
          const staged = readdirSync(stagingDir).filter((name) => name.endsWith('.csv')).length;
          mostStaged = Math.max(mostStaged, staged);
        },
        schemaChange: () => undefined,
      },
      signal: new AbortController().signal,
      limits: SYNC_DEFAULTS,
      segmentRows: SEGMENT_ROWS,
    });
    return { mostStaged, phase };
  };

  const expectWhole = async (): Promise<void> => {
    const rows = await run(
      api,
      'select count(*) as n, count(distinct id) as k, sum(account)::bigint::text as s from lake.staged.events',
    );
    expect(rows.data).toEqual([{ n: ROWS, k: ROWS, s: String((ROWS / 1000) * ((999 * 1000) / 2)) }]);
  };

  it('MySQL: reading waits for room, so staging holds a few segments, not the table', async () => {
    const source = await request('POST', '/sources', {
      connector: 'mysql',
      name: 'my',
      config: { port: mysqlDb.port, database: mysqlDb.database, sync_connections: 1 },
      host: mysqlDb.host,
      user: mysqlDb.reader,
    });
    const { mostStaged, phase } = await syncCounting(source.id as string, (context) => syncMysql(context));
    expect(phase).toBe('committed');
    // The loads waiting (the one running among them) and the segment being written.
    expect(mostStaged).toBeGreaterThan(0);
    expect(mostStaged).toBeLessThanOrEqual(MAX_WAITING_LOADS + 1);
    await expectWhole();
  }, 120_000);

  it('PostgreSQL: the same', async () => {
    const source = await request('POST', '/sources', {
      connector: 'postgres',
      name: 'pg',
      config: { port: pgDb.port, database: pgDb.database, sync_connections: 1 },
      host: pgDb.host,
      user: pgDb.reader,
    });
    const { mostStaged, phase } = await syncCounting(source.id as string, (context) =>
      syncPostgres({ ...context, hadSlot: false, cdcTables: [], onSlot: async () => undefined }),
    );
    expect(phase).toBe('committed');
    expect(mostStaged).toBeGreaterThan(0);
    expect(mostStaged).toBeLessThanOrEqual(MAX_WAITING_LOADS + 1);
    await expectWhole();
  }, 120_000);
});
