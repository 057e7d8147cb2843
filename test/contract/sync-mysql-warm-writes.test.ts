import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { closeIdleInstance, loadDuckDB } from '../../src/service/engine/duckdb.js';
import { useTestMysqlDatabase } from '../helpers/mysql.js';
import { jsonClient, run, syncSucceeded } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * A MySQL sync writes its tables one after another: each table's loads wait for the table before to commit. The
 * next table's write then takes that table's DuckDB instance, released warm, instead of opening one of its own
 * beside it while it still loads (a fresh instance's first load costs about twice a warm one's CPU, in page
 * faults). Instances are counted where DuckDB's module makes them; a write's is the one with a spill folder.
 */
const db = useTestMysqlDatabase();
let api: Harness;
let call: ReturnType<typeof jsonClient>;

beforeAll(async () => {
  // The first table is large enough that its load and commit still run when its rows are read and the next begins.
  await db.query(
    `CREATE TABLE a_first (id bigint PRIMARY KEY, note varchar(60) NOT NULL);
     INSERT INTO a_first SELECT seq, CONCAT('row ', seq, ' ', REPEAT('x', 40)) FROM seq_1_to_300000;
     CREATE TABLE b_second (id int PRIMARY KEY, name varchar(20) NOT NULL);
     INSERT INTO b_second SELECT seq, CONCAT('b', seq) FROM seq_1_to_2000;
     CREATE TABLE c_third (day date PRIMARY KEY, rate double NOT NULL);
     INSERT INTO c_third SELECT '2000-01-01' + INTERVAL seq DAY, seq / 7 FROM seq_0_to_999;
     ANALYZE TABLE a_first, b_second, c_third;`,
  );
  api = await inMemory.start();
  call = jsonClient(api);
}, 120_000);

afterEach(() => vi.restoreAllMocks());

afterAll(async () => {
  await api?.close();
  closeIdleInstance();
});

describe('a MySQL sync of several tables', () => {
  it('writes them one after another on one DuckDB instance, each table as the source has it', async () => {
    const source = await call('POST', '/sources', {
      connector: 'mysql',
      name: 'warm',
      config: { port: db.port, database: db.database },
      host: db.host,
      user: db.reader,
    });
    const created = vi.spyOn((await loadDuckDB()).DuckDBInstance, 'create');
    const job = await syncSucceeded(api, source.id as string);
    expect(job.status, JSON.stringify(job)).toBe('succeeded');
    const writeInstances = created.mock.calls.filter(
      ([, config]) => (config as Record<string, string> | undefined)?.temp_directory !== undefined,
    );
    expect(writeInstances).toHaveLength(1);
    const counts = (await run(
      api,
      `select (select count(*) from lake.warm.a_first) as a, (select count(distinct id) from lake.warm.a_first) as ids,
              (select count(*) from lake.warm.b_second) as b, (select sum(rate) from lake.warm.c_third) as rates`,
    )) as { data: { a: number; ids: number; b: number; rates: number }[] };
    const [row] = counts.data;
    expect({ a: row?.a, ids: row?.ids, b: row?.b }).toEqual({ a: 300_000, ids: 300_000, b: 2_000 });
    expect(row?.rates).toBeCloseTo((999 * 1000) / 2 / 7, 6);
  }, 120_000);
});
