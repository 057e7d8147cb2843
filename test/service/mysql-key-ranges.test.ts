import type * as mysql from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlConnection, mysqlQuery } from '../../src/service/connectors/mysql.js';
import { keyRanges, tableSizes } from '../../src/service/syncs/mysql-snapshot.js';
import { MIN_RANGE_BYTES } from '../../src/service/syncs/table-ranges.js';
import { readerSettings, useTestMysqlDatabase } from '../helpers/mysql.js';

/**
 * A large table's full read split into ranges of its integer key: together they hold every row once, whatever the
 * keys are (negative, at the ends of BIGINT and BIGINT UNSIGNED, on a split point), and a table that cannot be
 * split by its key is read whole.
 */
describe("splitting a MySQL table's read by its primary key", () => {
  const db = useTestMysqlDatabase();
  let connection: mysql.Connection;
  beforeAll(async () => {
    await db.query(
      `CREATE TABLE signed_keys (id bigint PRIMARY KEY);
       INSERT INTO signed_keys SELECT CAST(seq AS SIGNED) - 500 FROM seq_1_to_1000;
       INSERT INTO signed_keys VALUES (-9223372036854775808), (9223372036854775807), (9223372036854775806);
       CREATE TABLE unsigned_keys (id bigint unsigned PRIMARY KEY);
       INSERT INTO unsigned_keys SELECT seq FROM seq_0_to_999;
       INSERT INTO unsigned_keys VALUES (18446744073709551615), (9223372036854775808), (9223372036854775807);
       CREATE TABLE small_keys (id tinyint PRIMARY KEY);
       INSERT INTO small_keys SELECT seq FROM seq_1_to_100;
       CREATE TABLE text_keys (id varchar(10) PRIMARY KEY);
       INSERT INTO text_keys VALUES ('a'), ('b');
       CREATE TABLE two_keys (a int, b int, PRIMARY KEY (a, b));
       INSERT INTO two_keys VALUES (1, 1), (2, 2);`,
    );
    connection = mysqlConnection(readerSettings(db));
  });
  afterAll(() => {
    connection?.destroy();
  });

  const table = (name: string, key: string[] = ['id']) => ({ schema: db.database, name, primaryKey: key });
  const ids = async (name: string, condition: string): Promise<string[]> =>
    (await mysqlQuery(connection, `SELECT CAST(id AS CHAR) FROM ${name}${condition ? ` WHERE ${condition}` : ''}`)).map(
      (row) => String(row[0]),
    );

  it('covers every key exactly once, at both ends of signed and unsigned BIGINT', async () => {
    for (const [name, type] of [
      ['signed_keys', 'bigint'],
      ['unsigned_keys', 'bigint'],
      ['small_keys', 'tinyint'],
    ] as const) {
      for (const connections of [2, 3]) {
        const ranges = await keyRanges(connection, table(name), type, connections, 1, 0);
        expect(ranges, name).toHaveLength(connections);
        const perRange = await Promise.all(ranges.map((range) => ids(name, range)));
        const all = perRange.flat().sort();
        expect(all, name).toEqual((await ids(name, '')).sort());
        expect(new Set(all).size).toBe(all.length);
      }
    }
  });

  it('reads whole a small table, a table keyed by text or by two columns, and a read over one connection', async () => {
    const sizes = await tableSizes(connection, [table('signed_keys'), table('text_keys'), table('missing')]);
    const small = sizes.get(`${db.database}.signed_keys`) as number;
    expect(small).toBeGreaterThan(0);
    expect(small).toBeLessThan(2 * MIN_RANGE_BYTES);
    expect(sizes.has(`${db.database}.missing`)).toBe(false);
    expect(await keyRanges(connection, table('signed_keys'), 'bigint', 2, small)).toEqual(['']);
    expect(await keyRanges(connection, table('text_keys'), 'varchar', 2, 1, 0)).toEqual(['']);
    expect(await keyRanges(connection, table('two_keys', ['a', 'b']), 'int', 2, 1, 0)).toEqual(['']);
    expect(await keyRanges(connection, table('signed_keys'), 'bigint', 1, 1, 0)).toEqual(['']);
  });
});
