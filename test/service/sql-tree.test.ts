import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteLiteral } from '../../src/service/engine/duckdb.js';
import { parseTree, readTree, stringifyTree } from '../../src/service/engine/sql-tree.js';

/**
 * A statement's parse tree taken into JavaScript and written back (as time travel rewrites a statement) must be the
 * same statement: every constant as the caller wrote it, including those JSON cannot hold or JavaScript would change.
 */
describe('parse trees through JavaScript', () => {
  let instance: DuckDBInstance;
  let connection: DuckDBConnection;
  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:');
    connection = await instance.connect();
  });
  afterAll(() => {
    connection.closeSync();
    instance.closeSync();
  });

  const single = async (sql: string): Promise<string> =>
    String((await connection.runAndReadAll(sql)).getRows()[0]?.[0]);
  const answer = async (sql: string): Promise<string> =>
    JSON.stringify((await connection.runAndReadAll(sql)).getRowsJS(), (_k, v: unknown) =>
      typeof v === 'bigint' ? `${v}n` : typeof v === 'number' && !Number.isFinite(v) ? String(v) : v,
    );

  it.each([
    ['infinite DOUBLE literals', 'select 1e400 as a, -1e400 as b, 1e400 - 1e400 as c'],
    ['doubles written with a fraction or an exponent', 'select 10.0e0 as a, 1e1 as b, 0.1e0 as c, -0.0e0 as d'],
    ['a subnormal double', 'select 1.5e-320 as a'],
    ['doubles stay doubles, not decimals', 'select typeof(2.0e0) as t, 0.1e0 + 0.2e0 = 0.3e0 as eq, 2e0 / 3 as q'],
    ['doubles in a struct and a list', "select {'a': 1.5e300 * 10, 'b': [1e-400, 2.0e0]} as st"],
    ['64-bit integers past 2^53', 'select 9007199254740993 as a, 18446744073709551615::ubigint as b'],
    ['a HUGEINT', 'select 170141183460469231731687303715884105727 as a'],
    ['decimals', 'select 12.50 as a, -0.001 as b'],
    ['a string that looks like a number or Infinity', "select '1e400' as a, 'Infinity' as b, '10.0' as c"],
    ['constants in a filter', 'select count(*) as n from range(10) where range < 2.5e0 and 1e400 > range'],
  ])('%s', async (_what, sql) => {
    const marker = 'lake-test-marker:';
    const tree = parseTree(await single(`SELECT json_serialize_sql(${quoteLiteral(sql)})`), marker);
    const written = await single(`SELECT json_deserialize_sql(${quoteLiteral(stringifyTree(tree, marker))})`);
    expect(await answer(written)).toEqual(await answer(sql));
  });

  it('reads a tree JSON.parse refuses', async () => {
    const text = await single(`SELECT json_serialize_sql('select 1e400')`);
    expect(() => JSON.parse(text)).toThrow();
    expect(parseTree(text, 'm:')).toMatchObject({ error: false });
    expect(readTree(text)).toMatchObject({ error: false });
  });
});
