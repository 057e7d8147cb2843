import { beforeAll, describe, expect, it } from 'vitest';
import { sourceHome, syncAtStagingCap } from '../helpers/abandoned-reads.js';
import { useTestMysqlDatabase } from '../helpers/mysql.js';

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
       CREATE TABLE c_long (id int PRIMARY KEY, v char(4));
       INSERT INTO c_long SELECT seq, 'abcd' FROM seq_1_to_4500000;
       CREATE TABLE b_small (id int PRIMARY KEY, name text);
       INSERT INTO b_small SELECT seq, concat('n', seq) FROM seq_1_to_1000;
       ANALYZE TABLE a_wide, b_small, c_long`,
    );
  }, 120_000);

  const runningStatements = async (): Promise<number> =>
    (
      (await db.query(
        `SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE USER = '${db.reader}' AND COMMAND = 'Query'`,
      )) as { n: number | string }[]
    ).reduce((sum, row) => sum + Number(row.n), 0);

  for (const connections of [1, 2]) {
    it(`at the staging cap, fails that table at once and syncs the next (${connections} connection(s))`, async () => {
      const { home, source } = await sourceHome(
        'mysql',
        { host: db.host, port: db.port, user: db.reader, database: db.database },
        connections,
      );
      const { tables, ms } = await syncAtStagingCap(home, source);
      expect(ms).toBeLessThan(20_000);
      const wide = tables.get(`${db.database}.a_wide`);
      expect(wide?.phase).toBe('failed');
      expect(wide?.error).toMatch(/the cap per table \(LAKE_SYNC_MAX_TABLE_STAGING_BYTES\)/);
      // Read after the abandoned table, on the connection it left.
      expect(tables.get(`${db.database}.b_small`)?.phase).toBe('committed');
      expect(await runningStatements()).toBe(0);
    }, 90_000);
  }

  it('a table staged in all past the per-table cap syncs: only what is staged at once counts', async () => {
    // About 58 MB of records in segments of about 6.5 MB, each removed once loaded; reading waits while 4 of them
    // are waiting to load, so at most about 33 MB are staged at once. Counted until the table ended, the segments
    // passed the cap of 44 MiB together and the table failed, though the disk never held that much.
    const { home, source } = await sourceHome(
      'mysql',
      { host: db.host, port: db.port, user: db.reader, database: db.database },
      1,
    );
    const { tables } = await syncAtStagingCap(home, source, { capBytes: 44 << 20, tables: [`${db.database}.c_long`] });
    const long = tables.get(`${db.database}.c_long`);
    expect(long?.phase, JSON.stringify(long)).toBe('committed');
    expect(long?.completed).toBe(4_500_000);
  }, 90_000);
});
