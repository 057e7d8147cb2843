import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runLake, type CliResult } from '../helpers/cli.js';
import { useTestMysqlDatabase } from '../helpers/mysql.js';
import type { Json } from '../helpers/queries.js';
import { tempDir } from '../helpers/temp.js';

/**
 * A table lake stops reading part-way on MariaDB (a staging cap). Found: the rows still on their way were drained
 * while the next table's first statement already counted them against what a catalog statement may receive, so
 * that statement closed the connection and every table after the abandoned one failed with the driver's "Can't add
 * new command when connection is in closed state". Now the statement is killed (`KILL QUERY`, from a connection of
 * its own), its last rows dropped, and the next table is read in the same snapshot.
 */
describe('a MySQL table lake gives up reading part-way', () => {
  const db = useTestMysqlDatabase();
  beforeAll(async () => {
    // About 90 MB: read in key ranges over two connections when the source allows two.
    await db.query(
      `CREATE TABLE a_wide (id int PRIMARY KEY, pad text) ENGINE=InnoDB;
       INSERT INTO a_wide SELECT seq, repeat(md5(seq), 8) FROM seq_1_to_300000;
       CREATE TABLE b_small (id int PRIMARY KEY, name text);
       INSERT INTO b_small SELECT seq, concat('n', seq) FROM seq_1_to_1000;
       ANALYZE TABLE a_wide, b_small`,
    );
  }, 120_000);

  const runningStatements = async (): Promise<number> =>
    (
      (await db.query(
        `SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE USER = '${db.reader}' AND COMMAND = 'Query'`,
      )) as { n: number | string }[]
    ).reduce((sum, row) => sum + Number(row.n), 0);

  const tablesOf = (result: CliResult): Map<string, Json> =>
    new Map(((JSON.parse(result.stdout) as Json).tables as Json[]).map((t) => [t.table as string, t]));

  for (const connections of [1, 2]) {
    it(`at the staging cap, fails that table at once and syncs the next (${connections} connection(s))`, async () => {
      const home = join(tempDir('lake-abandoned-mysql'), 'home');
      const created = await runLake([
        '--home',
        home,
        'sources',
        'create',
        '--connector',
        'mysql',
        '--name',
        'src',
        ...[`host=${db.host}`, `port=${db.port}`, `user=${db.reader}`, `database=${db.database}`].flatMap((c) => [
          '--config',
          c,
        ]),
        '--config',
        `sync_connections=${connections}`,
        '--no-password',
        '--json',
      ]);
      expect(created.code, created.stderr).toBe(0);
      const source = (JSON.parse(created.stdout) as Json).id as string;
      const started = Date.now();
      const result = await runLake(['--home', home, 'sync', 'start', source, '--json'], {
        env: { LAKE_SYNC_MAX_TABLE_STAGING_BYTES: String(2 << 20), LAKE_SYNC_IDLE_TIMEOUT_SECONDS: '600' },
        timeoutMs: 60_000,
      });
      expect(Date.now() - started).toBeLessThan(20_000);
      const tables = tablesOf(result);
      const wide = tables.get(`${db.database}.a_wide`);
      expect(wide?.phase, result.stdout).toBe('failed');
      expect(wide?.error).toMatch(/the cap per table \(LAKE_SYNC_MAX_TABLE_STAGING_BYTES\)/);
      // Read after the abandoned table, on the connection it left.
      expect(tables.get(`${db.database}.b_small`)?.phase, result.stdout).toBe('committed');
      expect(await runningStatements()).toBe(0);
    }, 90_000);
  }
});
