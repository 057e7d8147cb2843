import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { expectError, run, submit, type Json } from '../helpers/queries.js';
import { TEST_STORE } from '../helpers/test-store.js';
import { tempDir } from '../helpers/temp.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * Time travel over the DuckLake catalog: a table's versions within retention (GET /catalog/{schema}/{table}/history,
 * `lake catalog history`), and queries of a table AT a version or a time, under the same grants as any reference.
 */
describe('time travel', () => {
  let api: Harness;
  let org: string;
  let first: number;
  let second: number;
  let between: string;
  let secretVersion: number;
  const homeDir = join(tempDir('lake-time-travel'), 'home');
  beforeAll(async () => {
    api = await inMemory.start({ homeDir });
    org = api.home.organization.id;
    const lake = api.services.lake;
    first = (await lake.writeTable(org, 'shop', 'items', "SELECT range AS id, 'first' AS v FROM range(3)")).snapshot.id;
    await new Promise((r) => setTimeout(r, 20));
    between = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    second = (await lake.writeTable(org, 'shop', 'items', "SELECT range AS id, 'second' AS v FROM range(5)")).snapshot
      .id;
    secretVersion = (await lake.writeTable(org, 'shop', 'secret', 'SELECT 42 AS answer')).snapshot.id;
    // A table of the same name in another schema is another table's history.
    await lake.writeTable(org, 'other', 'secret', 'SELECT 1 AS x');
    await lake.tables.retire(org, 'shop', 'secret');
  });
  afterAll(async () => {
    await api.close();
  });

  it("lists a table's versions, newest first, and reads any of them with AT (VERSION) or AT (TIMESTAMP)", async () => {
    const history = (await (await api.request('/catalog/shop/items/history')).json()) as Json;
    expect(history).toMatchObject({ object: 'list', has_more: false });
    expect(history.data).toEqual([
      {
        object: 'table_version',
        snapshot_id: second,
        created: expect.any(Number),
        operation: 'replaced',
        row_count: 5,
      },
      { object: 'table_version', snapshot_id: first, created: expect.any(Number), operation: 'created', row_count: 3 },
    ]);
    const read = async (sql: string): Promise<Json> => {
      const done = await run(api, sql);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      return done.data;
    };
    expect(await read(`select count(*) as n, min(v) as v from shop.items AT (VERSION => ${first})`)).toEqual([
      { n: 3, v: 'first' },
    ]);
    expect(await read(`select count(*) as n, min(v) as v from lake.shop.items`)).toEqual([{ n: 5, v: 'second' }]);
    expect(
      await read(`select count(*) as n, min(v) as v from lake.shop.items AT (TIMESTAMP => TIMESTAMPTZ '${between}')`),
    ).toEqual([{ n: 3, v: 'first' }]);
    // Two versions of one table in one query, each under its alias.
    expect(
      await read(
        `select o.v as old, n.v as new, count(*) as n from shop.items o AT (VERSION => ${first}) join shop.items n using (id) group by all`,
      ),
    ).toEqual([{ old: 'first', new: 'second', n: 3 }]);
    // A column is named as the statement names it: lake's rewrite of the version it reads does not show.
    const named = await run(
      api,
      `select (select count(*) from shop.items AT (VERSION => ${first})), (select count(*) from shop.items) as now_n, 1 + 1 from (select * from (select (select max(v) from shop.items AT (VERSION => ${first})))) t`,
    );
    expect(named.status, JSON.stringify(named.error)).toBe('succeeded');
    expect(named.columns).toEqual([
      `(SELECT count_star() FROM shop.items AT (VERSION => ${first}))`,
      'now_n',
      '(1 + 1)',
    ]);
    const inner = await run(api, `select * from (select (select max(v) from shop.items AT (VERSION => ${first})))`);
    expect(inner.columns).toEqual([`(SELECT max(v) FROM shop.items AT (VERSION => ${first}))`]);
    expect(inner.data).toEqual([{ [`(SELECT max(v) FROM shop.items AT (VERSION => ${first}))`]: 'first' }]);
    // A PIVOT whose values lake finds first (no IN list) reads the version too, named directly or in a subquery.
    expect(await read(`pivot shop.items AT (VERSION => ${first}) on v using count(*) order by id`)).toEqual([
      { id: 0, first: 1 },
      { id: 1, first: 1 },
      { id: 2, first: 1 },
    ]);
    expect(await read(`pivot (select v from shop.items i AT (VERSION => ${first})) on v using count(*)`)).toEqual([
      { first: 3 },
    ]);
    expect(
      await read(`pivot (select v from shop.items AT (VERSION => ${first})) on v in ('first') using count(*)`),
    ).toEqual([{ first: 3 }]);
    // Text before the table that is not ASCII (DuckDB gives a reference's place in bytes), and a quoted alias.
    expect(
      await read(`pivot (select 'é' as e, "Ï".v from shop.items "Ï" AT (VERSION => ${first})) on v using count(*)`),
    ).toEqual([{ e: 'é', first: 3 }]);
    // A table whose own name is the one lake could give a version (items@<n>) is not confused with that version.
    await api.services.lake.writeTable(org, 'shop', `items@${first}`, 'SELECT range AS id FROM range(7)');
    expect(
      await read(
        `select (select count(*) from shop."items@${first}") as own, (select count(*) from shop.items AT (VERSION => ${first})) as old`,
      ),
    ).toEqual([{ own: 7, old: 3 }]);
    // Columns qualified by the table's name bind as they would without AT.
    expect(
      await read(`select items.v, count(*) as n from shop.items AT (VERSION => ${first}) group by items.v`),
    ).toEqual([{ v: 'first', n: 3 }]);
    // And columns qualified by its schema too, with or without the catalog, as DuckDB binds them without AT.
    expect(
      await read(
        `select shop.items.v, lake.shop.items.id as id, count(*) as n from lake.shop.items AT (VERSION => ${first}) where shop.items.id < 2 group by all order by id`,
      ),
    ).toEqual([
      { v: 'first', id: 0, n: 1 },
      { v: 'first', id: 1, n: 1 },
    ]);
    // DuckDB's errors name the table as the statement does: no relation of lake's rewrite, no statement it wrote.
    const failed = await run(api, `select nosuchcol from shop.items AT (VERSION => ${first})`);
    // Two reads of one table need aliases, as without AT; the relation is named as written.
    const self = await run(
      api,
      `select * from shop.items AT (VERSION => ${first}) natural join shop.items AT (VERSION => ${first})`,
    );
    if (self.status === 'failed') expect(self.error.message).not.toMatch(/@/);
    expect(failed.status).toBe('failed');
    expect(failed.error.message).toContain('nosuchcol');
    expect(failed.error.message).not.toMatch(/@|\u007f|LINE 1|lake\.shop/);
    const ambiguous = await run(
      api,
      `select v from shop.items AT (VERSION => ${first}), shop.items AT (VERSION => ${second})`,
    );
    expect(ambiguous.error.message).toContain('Ambiguous reference to column name "v"');
    expect(ambiguous.error.message).not.toMatch(/@/);
    // A version written as a DOUBLE (DuckDB's parse tree writes it 1.0), and a DOUBLE elsewhere in the statement.
    expect(await read(`select count(*) as n from shop.items AT (VERSION => ${first}e0) where id < 1e0`)).toEqual([
      { n: 1 },
    ]);
    expect(await read(`select count(*) as n from shop.items AT (VERSION => ${first}.0::double)`)).toEqual([{ n: 3 }]);
    // Its DOUBLE literals stay DOUBLE: written back as 0.1 they would read as DECIMAL, and 0.1 + 0.2 = 0.3 would hold.
    expect(
      await read(
        `select typeof(2e0) as t, 0.1e0 + 0.2e0 = 0.3e0 as eq from shop.items AT (VERSION => ${first}) limit 1`,
      ),
    ).toEqual([{ t: 'DOUBLE', eq: false }]);
    // A DOUBLE JSON cannot hold (1e400 is infinite) in a statement that reads a version.
    expect(
      await read(`select count(*) as n, max(1e400) as inf from shop.items AT (VERSION => ${first}) where -1e400 < id`),
    ).toEqual([{ n: 3, inf: 'Infinity' }]);
    // A table taken out still reads as it was.
    expect(await read(`select answer from shop.secret AT (VERSION => ${secretVersion})`)).toEqual([{ answer: 42 }]);
  });

  it('a version out of reach fails the query with what is kept; the clause takes constants and now() only', async () => {
    const failed = await run(api, 'select * from shop.items AT (VERSION => 99999)');
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({
      code: 'query_failed',
      message: expect.stringMatching(/Snapshot 99999 is not in the lake: the current one is \d+\./),
    });
    // Each reason names what is wrong with the number, not a choice of two that may both be false.
    const negative = await run(api, 'select * from shop.items AT (VERSION => -1)');
    expect(negative.error.message).toMatch(/snapshots are numbered from 0, not -1/);
    const huge = await run(api, 'select * from shop.items AT (VERSION => 99999999999999999999)');
    expect(huge.error.message).toMatch(/100000000000000000000 is past any snapshot lake numbers/);
    const before = await run(api, "select * from shop.items AT (TIMESTAMP => TIMESTAMPTZ '2001-01-01 00:00:00+00')");
    expect(before.error.message).toMatch(/before the oldest snapshot kept/);
    // Lake computes each clause on the server: a statement naming more than 100 is refused before that work; 100
    // naming one version are computed once.
    const many = (n: number): string =>
      `select ${Array.from({ length: n }, () => `(select count(*) from shop.items AT (VERSION => ${first}))`).join(' + ')} as n`;
    const refused = await run(api, many(101));
    expect(refused.error).toMatchObject({
      code: 'query_failed',
      message: expect.stringMatching(/at most 100 tables AT/),
    });
    const hundred = await run(api, many(100));
    expect(hundred.status, JSON.stringify(hundred.error)).toBe('succeeded');
    expect(hundred.data).toEqual([{ n: 300 }]);
    // Values DuckDB cannot take as a version or a time fail the query with DuckDB's reason, never a 500.
    for (const clause of [
      "TIMESTAMP => 'not a time'",
      'VERSION => 1e30',
      'VERSION => 1e400',
      "VERSION => 'seven'",
      'VERSION => 99999999999999999999',
      `VERSION => ${first}.5`,
      'VERSION => 9223372036854775807',
      "TIMESTAMP => 'infinity'::timestamptz",
      "TIMESTAMP => '-infinity'",
    ]) {
      const odd = await run(api, `select * from shop.items AT (${clause})`);
      expect(odd.status, clause).toBe('failed');
      expect(odd.error, clause).toMatchObject({ code: 'query_failed', message: expect.stringMatching(/AT clause/) });
      // The reason is DuckDB's, without the statement lake evaluated the clause with.
      expect(odd.error.message, clause).not.toMatch(/LINE 1|SELECT|epoch_ms|NULL|9223372036854776000/);
    }
    // A view reads its tables as they are: one that named a version would break when retention removed it.
    await expect(
      api.services.lake.createView(org, 'shop', 'old_items', `select * from shop.items AT (VERSION => ${first})`),
    ).rejects.toMatchObject({ code: 'parameter_invalid', message: expect.stringMatching(/not AT a version/) });
    await api.services.lake.createView(org, 'shop', 'items_now', 'select * from shop.items');
    const view = await run(api, `select * from shop.items_now AT (VERSION => ${first})`);
    expect(view.error.message).toMatch(/shop.items_now is a view, which lake reads only as it is now/);
    // A table that was never there is said to be missing, not to have been missing only then.
    const never = await run(api, `select * from shop.nothing AT (VERSION => ${first})`);
    expect(never.error.message).toBe(
      `There is no table shop.nothing at snapshot ${first}, nor now. lake catalog ls lists the tables.`,
    );
    await api.services.lake.writeTable(org, 'shop', 'later', 'SELECT 1 AS x');
    const later = await run(api, `select * from shop.later AT (VERSION => ${first})`);
    expect(later.error.message).toBe(
      `shop.later did not exist at snapshot ${first}. lake catalog history shop.later lists its versions.`,
    );
    await expectError(
      await submit(api, 'select * from shop.items AT (TIMESTAMP => (select max(ordered_at) from demo.orders))'),
      400,
      'forbidden_function',
    );
  });

  it('a restricted credential is refused a table it may not read, at any snapshot', async () => {
    const member = await api.home.directory.createUser(org, 'Reader', 'member');
    const token = (
      await api.home.credentials.issue({
        kind: 'pat',
        organizationId: org,
        userId: member.id,
        name: 'r',
        scopes: ['query:read', 'data:read'],
      })
    ).secret;
    await api.services.permissions.setEnabled(org, true);
    await api.services.permissions.grant(org, 'shop', 'items', 'user', member.id);
    try {
      const ask = (sql: string) =>
        api.request('/queries', {
          method: 'POST',
          token,
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ sql }),
        });
      await expectError(
        await ask(`select * from shop.secret AT (VERSION => ${secretVersion})`),
        403,
        'grant_table_denied',
      );
      await expectError(await ask(`select * from demo.orders AT (VERSION => ${first})`), 403, 'grant_table_denied');
      const allowed = (await (
        await ask(`select count(*) as n from shop.items AT (VERSION => ${first})`)
      ).json()) as Json;
      let seen: Json = allowed;
      for (let i = 0; i < 100 && !['succeeded', 'failed'].includes(seen.status); i++)
        seen = (await (await api.request(`/queries/${allowed.id}?wait=2&format=inline`, { token })).json()) as Json;
      expect(seen.data).toEqual([{ n: 3 }]);
      await expectError(await api.request('/catalog/shop/secret/history', { token }), 404, 'catalog_not_found');
      expect((await api.request('/catalog/shop/items/history', { token })).status).toBe(200);
      const secret = (await (await api.request('/catalog/shop/secret/history')).json()) as Json;
      expect(secret.data.map((v: Json) => [v.operation, v.row_count])).toEqual([
        ['dropped', null],
        ['created', 1],
      ]);
    } finally {
      await api.services.permissions.setEnabled(org, false);
    }
  });

  it("pages a table's history: limit, next_cursor as starting_after, and a cursor that is no version refused", async () => {
    const lake = api.services.lake;
    const written: number[] = [];
    for (let i = 1; i <= 7; i++)
      written.push((await lake.writeTable(org, 'shop', 'paged', `SELECT range AS id FROM range(${i})`)).snapshot.id);
    // Another table written in between is not this one's version, nor a cursor into its history.
    const foreign = (await lake.writeTable(org, 'shop', 'between', 'SELECT 1 AS x')).snapshot.id;
    await lake.writeTable(org, 'shop', 'paged', 'SELECT range AS id FROM range(8)');
    const whole = (await (await api.request('/catalog/shop/paged/history?limit=100')).json()) as Json;
    expect(whole).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(whole.data.map((v: Json) => v.row_count)).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    expect(whole.data.map((v: Json) => v.operation)).toEqual([...Array(7).fill('replaced'), 'created']);
    // The default page is 20; here every version fits.
    expect(((await (await api.request('/catalog/shop/paged/history')).json()) as Json).data).toEqual(whole.data);
    const pages: Json[] = [];
    let cursor: string | null = null;
    do {
      const page = (await (
        await api.request(`/catalog/shop/paged/history?limit=3${cursor ? `&starting_after=${cursor}` : ''}`)
      ).json()) as Json;
      pages.push(page);
      expect(page.data.length).toBeLessThanOrEqual(3);
      cursor = page.next_cursor as string | null;
      if (page.has_more) expect(cursor).toBe(String(page.data[page.data.length - 1].snapshot_id));
      else expect(cursor).toBeNull();
    } while (cursor !== null);
    expect(pages.map((p) => p.data.length)).toEqual([3, 3, 2]);
    expect(pages.flatMap((p) => p.data)).toEqual(whole.data);
    for (const bad of ['abc', '-1', '1.5', String(foreign), String((written[6] as number) + 100), '9'.repeat(30)])
      await expectError(
        await api.request(`/catalog/shop/paged/history?starting_after=${bad}`),
        400,
        'invalid_cursor',
        'starting_after',
      );
    // Every kind of version, each judged against the one before it, on a page of one as on a page of all.
    await lake.writeTable(org, 'shop', 'ops', 'SELECT range AS id, 1 AS v FROM range(4)');
    await lake.writeTable(org, 'shop', 'ops', 'SELECT 1::BIGINT AS id, 2 AS v', { mergeOn: { key: ['id'] } });
    await lake.writeTable(org, 'shop', 'ops', "SELECT 2::BIGINT AS id, 3 AS v, 'x' AS w", { mergeOn: { key: ['id'] } });
    await lake.writeTable(org, 'shop', 'ops', 'SELECT 7 AS id');
    await lake.tables.retire(org, 'shop', 'ops');
    await lake.writeTable(org, 'shop', 'ops', 'SELECT 8 AS id');
    const ops = (await (await api.request('/catalog/shop/ops/history')).json()) as Json;
    expect(ops.data.map((v: Json) => [v.operation, v.row_count])).toEqual([
      ['created', 1],
      ['dropped', null],
      ['replaced', 1],
      ['altered', 4],
      ['merged', 4],
      ['created', 4],
    ]);
    const single: Json[] = [];
    for (let after: string | null = null, i = 0; i === 0 || after !== null; i++) {
      const page = (await (
        await api.request(`/catalog/shop/ops/history?limit=1${after ? `&starting_after=${after}` : ''}`)
      ).json()) as Json;
      single.push(...page.data);
      after = page.next_cursor as string | null;
    }
    expect(single).toEqual(ops.data);
    await expectError(await api.request('/catalog/shop/paged/history?limit=0'), 400, 'parameter_invalid', 'limit');
    await expectError(await api.request('/catalog/shop/paged/history?limit=101'), 400, 'parameter_invalid', 'limit');
  });

  it.runIf(TEST_STORE === 'sqlite')('lake catalog history and lake query AT, from the command line', async () => {
    const env = { LAKE_HOME: homeDir, LAKE_CONFIG_DIR: tempDir('lake-time-travel-config') };
    const history = await runLake(['catalog', 'history', 'shop.items'], { env });
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toMatch(
      new RegExp(`^version,created,operation,rows\\n${second},[^,]+,replaced,5\\n${first},[^,]+,created,3\\n$`),
    );
    const json = JSON.parse((await runLake(['catalog', 'history', 'shop.items', '--json'], { env })).stdout) as Json;
    expect(json.data[1]).toMatchObject({ snapshot_id: first, operation: 'created' });
    // Paged as every list: one version, and on stderr how to get the next page.
    const one = await runLake(['catalog', 'history', 'shop.items', '--limit', '1'], { env });
    expect(one.stdout).toMatch(new RegExp(`^version,created,operation,rows\\n${second},[^,]+,replaced,5\\n$`));
    expect(one.stderr).toContain(`--starting-after ${second}`);
    const rest = await runLake(['catalog', 'history', 'shop.items', '--starting-after', String(second)], { env });
    expect(rest.stdout).toMatch(new RegExp(`^version,created,operation,rows\\n${first},[^,]+,created,3\\n$`));
    const all = await runLake(['catalog', 'history', 'shop.items', '--limit', '1', '--all', '--json'], { env });
    expect((JSON.parse(all.stdout) as Json).data.map((v: Json) => v.snapshot_id)).toEqual([second, first]);
    const bad = await runLake(['catalog', 'history', 'shop.items', '--starting-after', 'x'], { env });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('invalid_cursor');
    const old = await runLake(['query', `select min(v) as v from shop.items AT (VERSION => ${first})`], { env });
    expect(old.stdout).toBe('v\nfirst\n');
  });
});
