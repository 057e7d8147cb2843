import { describe, expect, it } from 'vitest';
import { connectMysql, endMysql, mysqlQuery } from '../../src/service/connectors/mysql.js';
import { prepareSession } from '../../src/service/syncs/mysql-snapshot.js';
import { readerSettings, useTestMysqlDatabase } from '../helpers/mysql.js';

/**
 * A sync's MySQL session. Its reads pause while the sync's loads catch up; the server ends a statement whose client
 * takes nothing for net_write_timeout (60 s by default), so the session waits as long as lake's own idle bound.
 */
describe("a MySQL sync's session", () => {
  const db = useTestMysqlDatabase();

  const sessionAfter = async (idleTimeoutMs: number): Promise<Record<string, unknown>> => {
    const connection = await connectMysql(readerSettings(db));
    try {
      await prepareSession(connection, idleTimeoutMs);
      const [row] = await mysqlQuery(connection, 'SELECT @@session.net_write_timeout, @@session.time_zone');
      return { netWriteTimeout: Number(row?.[0]), timeZone: String(row?.[1]) };
    } finally {
      await endMysql(connection);
    }
  };

  it("waits for a paused reader as long as lake's idle bound, in UTC", async () => {
    expect(await sessionAfter(1_800_000)).toEqual({ netWriteTimeout: 1800, timeZone: '+00:00' });
  });

  it("never waits less than the server's default, nor more than a year", async () => {
    expect((await sessionAfter(5_000)).netWriteTimeout).toBe(60);
    expect((await sessionAfter(10 * 31_536_000_000)).netWriteTimeout).toBe(31_536_000);
  });
});
