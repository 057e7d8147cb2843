import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { run, type Json } from '../helpers/queries.js';

/** DuckDB's everyday statements beside SELECT, as an analyst types them (issue 31). */
describe.each(TRANSPORTS)("DuckDB's own read-only statements over $name", (transport) => {
  let api: Harness;
  beforeAll(async () => {
    api = await transport.start();
    await api.services.lake.writeTable(
      api.home.organization.id,
      'shop',
      'sales',
      "select i as id, ['b', 'a', null, 'c'][i % 4 + 1] as region, [1, 2, 10, null][i % 4 + 1] as tier, i * 2 as amount from range(12) t(i)",
    );
  });
  afterAll(async () => {
    await api.close();
  });

  const succeeded = async (sql: string): Promise<Json> => {
    const body = await run(api, sql);
    expect(body.status, `${sql}: ${JSON.stringify(body.error)}`).toBe('succeeded');
    return body;
  };
  const rows = async (sql: string): Promise<Json[]> => (await succeeded(sql)).data as Json[];
  // The result's columns in order (a JavaScript object puts keys such as '10' first).
  const names = async (sql: string): Promise<string[]> => (await succeeded(sql)).columns as string[];

  it('DESCRIBE, DESC and SHOW of a table list its columns in order', async () => {
    for (const sql of [
      'describe shop.sales',
      'DESC lake.shop.sales;',
      'show shop.sales',
      'describe select id from shop.sales',
    ]) {
      const described = await rows(sql);
      expect(described[0], sql).toMatchObject({ column_name: 'id', column_type: 'BIGINT' });
    }
    expect((await rows('describe shop.sales')).map((r) => r.column_name)).toEqual(['id', 'region', 'tier', 'amount']);
  });

  it('SHOW TABLES lists every table with its schema; SHOW ALL TABLES and SHOW SCHEMAS are DuckDB’s', async () => {
    const tables = await rows('show tables');
    expect(await names('show tables')).toEqual(['schema', 'name']);
    expect(tables).toEqual(
      expect.arrayContaining([
        { schema: 'shop', name: 'sales' },
        { schema: 'demo', name: 'orders' },
      ]),
    );
    expect((await rows('show all tables')).find((r) => r.name === 'sales')).toMatchObject({ schema: 'shop' });
    expect((await rows('show schemas')).map((r) => r.schema_name)).toEqual(expect.arrayContaining(['shop', 'demo']));
  });

  it('SUMMARIZE gives one row of statistics per column', async () => {
    const summary = await rows('summarize shop.sales');
    expect(summary.map((r) => r.column_name)).toEqual(['id', 'region', 'tier', 'amount']);
    expect(summary[0]).toMatchObject({ min: '0', max: '11', count: 12 });
  });

  it('PIVOT without IN finds the values as DuckDB does (as text, sorted, no NULL); with IN it keeps yours', async () => {
    const pivot = 'pivot shop.sales on tier using sum(amount) group by region order by region';
    // DuckDB's order of the values is text order: 1, 10, 2.
    expect(await names(pivot)).toEqual(['region', '1', '10', '2']);
    expect((await rows(pivot))[0]).toEqual({ region: 'a', 1: null, 10: null, 2: '30' });
    expect(await names("PIVOT shop.sales ON region IN ('c', 'a') USING count(*) GROUP BY tier ORDER BY tier")).toEqual([
      'tier',
      'c',
      'a',
    ]);
    const twice = 'pivot (select region, tier from shop.sales) as s on region, tier using count(*)';
    expect(await names(twice)).toEqual(['a_1', 'a_10', 'a_2', 'b_1', 'b_10', 'b_2', 'c_1', 'c_10', 'c_2']);
    expect((await rows(twice))[0]).toMatchObject({ a_2: 3, b_1: 3, c_1: 0 });
  });

  it('a PIVOT whose values would be too much text is refused with a clear error, not held in memory', async () => {
    // 100 distinct values of 100,000 characters: 10 MB of column names.
    const body = await run(
      api,
      "pivot (select repeat('x', 100000) || range::varchar as big, range as n from range(100)) as s on big using count(*)",
    );
    expect(body.status).toBe('failed');
    expect(body.error.message).toMatch(/more than 8 MB of text; list the values you want with ON column IN/);
  });

  it('UNPIVOT turns columns into rows', async () => {
    expect(await rows('unpivot (select 1 as a, 2 as b) on a, b into name k value v order by k')).toEqual([
      { k: 'a', v: 1 },
      { k: 'b', v: 2 },
    ]);
  });

  it("a parse error keeps DuckDB's LINE and caret, pointing into the caller's SQL", async () => {
    const body = await run(api, 'select 1,\n  min(at) from shop.sales');
    expect(body.status).toBe('failed');
    expect(body.error.message).toBe(
      'Parser Error: syntax error at or near ")"\n\nLINE 2:   min(at) from shop.sales\n                ^',
    );
    const bound = await run(api, 'select nope from shop.sales');
    expect(bound.error.message).toMatch(
      /Referenced column "nope" not found[\s\S]*\nLINE 1: select nope from shop\.sales\n {15}\^$/,
    );
    // A failure while running has no excerpt of the COPY lake wraps the statement in.
    const running = await run(api, "select cast('x' as integer)");
    expect(running.error.message).not.toMatch(/LINE|COPY/);
  });
});
