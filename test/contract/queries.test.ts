import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inMemory, TRANSPORTS, type Harness } from '../helpers/transports.js';
import { expectError, finished, run, submit, submitOk, type Json } from '../helpers/queries.js';

describe.each(TRANSPORTS)('queries over $name', (transport) => {
  let api: Harness;
  beforeAll(async () => {
    api = await transport.start();
  });
  afterAll(async () => {
    await api.close();
  });

  it('POST /queries answers 202 with Location and the running query object', async () => {
    const sql = 'select * from lake.demo.orders order by order_id limit 5';
    const response = await submit(api, sql);
    expect(response.status).toBe(202);
    const body = (await response.json()) as Json;
    expect(body).toEqual({
      object: 'query',
      id: expect.stringMatching(/^qr_[0-9a-z]{26}$/),
      status: 'running',
      created: expect.any(Number),
      sql,
      livemode: true,
    });
    expect(response.headers.get('location')).toBe(`/queries/${body.id}`);
    expect(Math.abs(body.created - Date.now() / 1000)).toBeLessThan(5);
  });

  it('abbreviates long SQL in the response', async () => {
    const sql = `select 1 as x -- ${'y'.repeat(2000)}`;
    const body = await submitOk(api, sql);
    expect(body.sql.length).toBe(1001);
    expect(body.sql.endsWith('…')).toBe(true);
  });

  it('400 parameter_missing for absent sql, parameter_invalid for a non-string or empty one', async () => {
    await expectError(
      await api.request('/queries', { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } }),
      400,
      'parameter_missing',
      'sql',
    );
    await expectError(await submit(api, 42), 400, 'parameter_invalid', 'sql');
    await expectError(await submit(api, ['select 1']), 400, 'parameter_invalid', 'sql');
    await expectError(await submit(api, '  -- only a comment\n'), 400, 'parameter_invalid', 'sql');
    // A NUL ends the text DuckDB reads: what follows it (here a second statement behind a comment) must not be
    // judged by the guard as one text and by the engine as another; it ended as a query_failed quoting lake's wrapper.
    await expectError(await submit(api, "select 1 as a -- \u0000' ; drop table x"), 400, 'parameter_invalid', 'sql');
  });

  it('refuses each SQL restriction before execution with its code', async () => {
    await expectError(await submit(api, 'select 1; select 2'), 400, 'multiple_statements', 'sql');
    await expectError(await submit(api, 'drop table lake.demo.orders'), 400, 'write_not_allowed', 'sql');
    await expectError(await submit(api, "select * from read_parquet('x.parquet')"), 400, 'forbidden_function', 'sql');
    await expectError(await submit(api, "select 'read_csv' as name"), 400, 'forbidden_function', 'sql');
    await expectError(await submit(api, `select ${'1+'.repeat(50_000)}1`), 400, 'sql_too_long', 'sql');
    for (const uri of ["select 's3://bucket/key'", "select 'gs://b/k'", "select 'FILE:///etc/passwd'"]) {
      await expectError(await submit(api, uri), 400, 'forbidden_function', 'sql');
    }
    // DuckDB's own statement type has the last word: EXPLAIN is allowed only before a SELECT (explain.test.ts).
    await expectError(await submit(api, 'explain explain select 1'), 400, 'write_not_allowed', 'sql');
  });

  it('allows write keywords inside string literals, quoted identifiers and comments, and one trailing semicolon', async () => {
    const body = await run(api, `select 'drop table x; insert' as "update" /* delete */ -- copy\n;`);
    expect(body.status).toBe('succeeded');
    expect(body.data).toEqual([{ update: 'drop table x; insert' }]);
  });

  it('format=files (the default) gives a freshly signed URL that needs no credential and serves HEAD and Range', async () => {
    const done = await finished(
      api,
      (await submitOk(api, 'select * from lake.demo.order_items order by order_id, line_no')).id,
    );
    expect(done).toMatchObject({ status: 'succeeded', row_count: null, duration_ms: expect.any(Number) });
    expect(done.files).toHaveLength(1);
    const file = done.files[0];
    expect(Math.abs(file.expires - (Date.now() / 1000 + 3600))).toBeLessThan(5);
    expect(file.url.startsWith(`${api.baseUrl}/files/results/${done.id}?`)).toBe(true);

    const whole = await api.request(file.url, { token: null });
    expect(whole.status).toBe(200);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const bytes = new Uint8Array(await whole.arrayBuffer());
    expect(bytes.length).toBe(file.bytes);
    expect(Buffer.from(bytes.slice(0, 4)).toString()).toBe('PAR1');

    const head = await api.request(file.url, { method: 'HEAD', token: null });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(file.bytes));
    expect((await head.arrayBuffer()).byteLength).toBe(0);

    const part = await api.request(file.url, { token: null, headers: { Range: 'bytes=4-99' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 4-99/${file.bytes}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(Buffer.from(bytes.slice(4, 100)));
    const tail = await api.request(file.url, { token: null, headers: { Range: `bytes=${file.bytes - 4}-` } });
    expect(Buffer.from(await tail.arrayBuffer()).toString()).toBe('PAR1');
    await expectError(
      await api.request(file.url, { token: null, headers: { Range: `bytes=${file.bytes + 10}-` } }),
      416,
      'range_not_satisfiable',
    );
  });

  it("a link signed before its organization was deactivated is refused with the organization's credentials", async () => {
    const done = await finished(api, (await submitOk(api, 'select 1 as x')).id);
    const url = done.files[0].url as string;
    expect((await api.request(url, { token: null })).status).toBe(200);
    await api.home.directory.setOrganizationDeactivated(api.home.organization.id, true);
    try {
      // Before, the link served the file for the rest of its hour.
      await expectError(await api.request(url, { token: null }), 401, 'organization_deactivated');
    } finally {
      await api.home.directory.setOrganizationDeactivated(api.home.organization.id, false);
    }
    expect((await api.request(url, { token: null })).status).toBe(200);
  });

  it('a tampered, unsigned or expired URL gets a JSON error, never the file', async () => {
    const done = await finished(api, (await submitOk(api, 'select 1 as x')).id);
    const url = new URL(done.files[0].url);
    const tampered = new URL(url);
    tampered.searchParams.set(
      'signature',
      url.searchParams.get('signature')!.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')),
    );
    await expectError(await api.request(tampered.toString(), { token: null }), 403, 'signed_url_invalid');
    const longer = new URL(url);
    longer.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    await expectError(await api.request(longer.toString(), { token: null }), 403, 'signed_url_invalid');
    await expectError(await api.request(`/files/results/${done.id}`, { token: null }), 403, 'signed_url_invalid');
    const other = await finished(api, (await submitOk(api, 'select 2 as x')).id);
    const swapped = new URL(url);
    swapped.pathname = `/files/results/${other.id}`;
    await expectError(await api.request(swapped.toString(), { token: null }), 403, 'signed_url_invalid');

    const past = Math.floor(Date.now() / 1000) - 10;
    const path = `/files/results/${done.id}`;
    const expired = `${path}?expires=${past}&signature=${api.services.signer.sign('result', path, past)}`;
    await expectError(await api.request(expired, { token: null }), 403, 'signed_url_expired');
  });

  it('format=inline pages through every row with has_more and next_cursor, total row_count on every page', async () => {
    const first = await finished(
      api,
      (await submitOk(api, 'select range as n, range * 2 as twice from range(250) order by n')).id,
      '&format=inline&limit=100',
    );
    expect(first).toMatchObject({ status: 'succeeded', row_count: 250, columns: ['n', 'twice'], has_more: true });
    expect(first.data).toHaveLength(100);
    const seen: number[] = first.data.map((r: Json) => r.n);
    let cursor = first.next_cursor;
    while (cursor) {
      const page = (await (
        await api.request(`/queries/${first.id}?format=inline&limit=100&starting_after=${cursor}`)
      ).json()) as Json;
      expect(page.row_count).toBe(250);
      seen.push(...page.data.map((r: Json) => r.n));
      cursor = page.has_more ? page.next_cursor : null;
      if (!page.has_more) expect(page.next_cursor).toBeNull();
    }
    expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => i));

    const defaults = (await (await api.request(`/queries/${first.id}?format=inline`)).json()) as Json;
    expect(defaults.data).toHaveLength(100);
    const max = (await (await api.request(`/queries/${first.id}?format=inline&limit=1000`)).json()) as Json;
    expect(max.data).toHaveLength(250);
    expect(max.has_more).toBe(false);
  });

  it('refuses bad format, limit and cursor values with their codes', async () => {
    const done = await finished(api, (await submitOk(api, 'select range from range(10)')).id);
    await expectError(await api.request(`/queries/${done.id}?format=csv`), 400, 'invalid_format', 'format');
    for (const limit of ['0', '1001', 'abc', '-1', '2.5']) {
      await expectError(
        await api.request(`/queries/${done.id}?format=inline&limit=${limit}`),
        400,
        'parameter_invalid',
        'limit',
      );
    }
    await expectError(
      await api.request(`/queries/${done.id}?format=inline&starting_after=nonsense`),
      400,
      'invalid_cursor',
      'starting_after',
    );
    const other = await finished(
      api,
      (await submitOk(api, 'select range from range(10)')).id,
      '&format=inline&limit=2',
    );
    await expectError(
      await api.request(`/queries/${done.id}?format=inline&starting_after=${other.next_cursor}`),
      400,
      'invalid_cursor',
      'starting_after',
    );
  });

  it('takes DOUBLE literals JSON cannot write (1e400 is infinite) as DuckDB does', async () => {
    // DuckDB's parse tree writes such a constant as a bare Infinity, which is not JSON: the statement is still read.
    const body = await run(api, 'select 1e400 as inf, -1e400 as ninf, 1e400 - 1e400 as nan, 2.5e0 as dbl');
    expect(body.status, JSON.stringify(body.error)).toBe('succeeded');
    expect(body.data).toEqual([{ inf: 'Infinity', ninf: '-Infinity', nan: 'NaN', dbl: 2.5 }]);
  });

  it('writes values exactly in JSON', async () => {
    const body = await run(
      api,
      `select 9007199254740993::bigint as big, -9007199254740993::bigint as neg_big, 42::bigint as small,
      170141183460469231731687303715884105727::hugeint as huge, 12.50::decimal(10,2) as price, 1.5::double as dbl, 'nan'::double as nan,
      'inf'::double as inf, date '2024-02-29' as d, 'infinity'::date as dinf, timestamp '2024-01-02 03:04:05.123456' as ts,
      timestamptz '2024-01-02 03:04:05+02' as tstz, time '01:02:03.5' as t, '\\xAA\\x00'::blob as bl, [1, null, 3] as list,
      {'a': 1, 'b': [1.25::decimal(4,2)]} as st, map {'k': 1} as m, interval 1 month + interval 90 minute as iv,
      '{"x": [1, 2]}'::json as j, 'fbc2bf30-a3e6-4eb7-96f5-5d949f0267dd'::uuid as u, true as b, null::int as nothing`,
    );
    expect(body.data[0]).toEqual({
      big: '9007199254740993',
      neg_big: '-9007199254740993',
      small: 42,
      huge: '170141183460469231731687303715884105727',
      price: '12.50',
      dbl: 1.5,
      nan: 'NaN',
      inf: 'Infinity',
      d: '2024-02-29',
      dinf: 'infinity',
      ts: '2024-01-02T03:04:05.123456',
      tstz: '2024-01-02T01:04:05Z',
      t: '01:02:03.5',
      bl: 'qgA=',
      list: [1, null, 3],
      st: { a: 1, b: ['1.25'] },
      m: { k: 1 },
      iv: 'P1MT1H30M',
      j: { x: [1, 2] },
      u: 'fbc2bf30-a3e6-4eb7-96f5-5d949f0267dd',
      b: true,
      nothing: null,
    });
  });

  it("DuckDB's newer types come as their text: GEOMETRY as WKT, VARIANT as its JSON value", async () => {
    const body = await run(
      api,
      `select 'POINT(1 2)'::geometry as g, {'a': 1, 'b': [1.5, null]}::variant as v, 'x'::variant as s,
              12345678901234567890::hugeint::variant as big, ['POINT(0 0)'::geometry] as gl`,
    );
    expect(body.status, JSON.stringify(body.error)).toBe('succeeded');
    expect(body.data).toEqual([
      { g: 'POINT (1 2)', v: { a: 1, b: [1.5, null] }, s: 'x', big: '12345678901234567890', gl: "['POINT (0 0)']" },
    ]);
  });

  it('a JSON value keeps every number exactly: those a double cannot hold as strings, as in other columns', async () => {
    const body = await run(
      api,
      `select '{"big": 12345678901234567890, "neg": -9007199254740993, "safe": 9007199254740991, "d": 1.5, "e": 1e400,
                "odd": [NaN, Infinity, -Infinity], "s": "12345678901234567890", "n": null}'::json as j,
              json_object('x', 'inf'::double, 'y', 'nan'::double) as o`,
    );
    expect(body.status, JSON.stringify(body.error)).toBe('succeeded');
    expect(body.data).toEqual([
      {
        j: {
          big: '12345678901234567890',
          neg: '-9007199254740993',
          safe: 9007199254740991,
          d: 1.5,
          e: 'Infinity',
          odd: ['NaN', 'Infinity', '-Infinity'],
          s: '12345678901234567890',
          n: null,
        },
        o: { x: 'Infinity', y: 'NaN' },
      },
    ]);
  });

  it('a JSON value nested past 1,000 levels fails its query saying what to do, not with a stack overflow', async () => {
    const nested = (depth: number): string => `json('${'['.repeat(depth)}${']'.repeat(depth)}')`;
    // Node's JSON.stringify ran out of stack near 5,000 levels: "Maximum call stack size exceeded".
    const deep = await run(api, `select ${nested(6000)} as j`);
    expect(deep.status).toBe('failed');
    expect(deep.error.message).toMatch(/nests deeper than 1,000 levels.*cast to VARCHAR/);
    const limit = await run(api, `select ${nested(1000)} as j, ${nested(6000)}::varchar as t`);
    expect(limit.status, JSON.stringify(limit.error)).toBe('succeeded');
    expect(JSON.stringify(limit.data[0].j)).toBe(`${'['.repeat(1000)}${']'.repeat(1000)}`);
    expect(limit.data[0].t).toHaveLength(12000);
  });

  it('an engine message does not advise a SET the query cannot run', async () => {
    const deep = await run(api, `select ${Array(1200).fill('1').join(' + ')} as x`);
    expect(deep.status).toBe('failed');
    expect(deep.error.message).toMatch(/Max expression depth limit of 1000 exceeded/);
    expect(deep.error.message).toMatch(/a setting of the server, which a query cannot change/);
    expect(deep.error.message).not.toMatch(/SET max_expression_depth/);
  });

  it('keeps ORDER BY order and exposes duplicate column names distinctly', async () => {
    const body = await run(api, 'select range as v, 1 as a, 2 as a from range(5) order by v desc');
    expect(body.data.map((r: Json) => r.v)).toEqual([4, 3, 2, 1, 0]);
    expect(body.columns).toEqual(['v', 'a', 'a_1']);
  });

  it('a failing query ends failed with a helpful message that shows no internal path', async () => {
    const missing = await run(api, 'select * from lake.demo.nope');
    expect(missing.status).toBe('failed');
    expect(missing.error.message).toMatch(/nope/);
    const runtime = await run(api, "select 'abc'::integer");
    expect(runtime.status).toBe('failed');
    expect(runtime.error.message).toMatch(/Could not convert string 'abc'/);
    // A syntax error says DuckDB's parse of the user's SQL, not of lake's wrappers (the statement splitter, the serializer).
    const syntax = await run(api, 'selec 1 frm');
    expect(syntax.status).toBe('failed');
    expect(syntax.error.message).toMatch(/syntax error at or near "selec"/);
    for (const body of [missing, runtime, syntax]) {
      expect(body.error.message).not.toContain(api.home.paths.root);
      expect(body.error.message).not.toMatch(/COPY|json_serialize_sql|extract statements/i);
      expect(body).not.toHaveProperty('files');
      expect(body.duration_ms).toEqual(expect.any(Number));
    }
  });

  it("404 query_not_found for an unknown id and for another organization's query", async () => {
    await expectError(await api.request('/queries/qr_doesnotexist'), 404, 'query_not_found');
    const mine = await submitOk(api, 'select 1');
    const otherOrg = await api.home.directory.createOrganization('Other');
    const stranger = await api.home.directory.createUser(otherOrg.id, 'Stranger', 'owner');
    const token = await api.home.credentials.issue({
      kind: 'pat',
      organizationId: otherOrg.id,
      userId: stranger.id,
      name: 's',
      scopes: ['query:read'],
    });
    await expectError(await api.request(`/queries/${mine.id}`, { token: token.secret }), 404, 'query_not_found');
  });

  it('requires the query:read scope', async () => {
    const token = await api.home.credentials.issue({
      kind: 'pat',
      organizationId: api.home.organization.id,
      userId: api.home.owner.id,
      name: 'n',
      scopes: ['jobs:read'],
    });
    await expectError(await submit(api, 'select 1', { token: token.secret }), 403, 'missing_scope');
  });
});

describe('column and key names that are JavaScript object internals', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await inMemory.start();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('__proto__, constructor and toString survive as columns, map keys and struct fields in inline rows', async () => {
    const sql = `select 1 as "__proto__", 2 as "constructor", 3 as "toString", 4 as "hasOwnProperty", map(['__proto__'], [5]) as m, {'__proto__': 6, 'a': {'__proto__': 7}} as s`;
    const inline = await run(api, sql);
    expect(inline.columns).toEqual(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'm', 's']);
    const row = inline.data[0] as Json;
    expect(Object.keys(row)).toEqual(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'm', 's']);
    expect(JSON.parse(JSON.stringify(row))).toEqual(
      JSON.parse(
        '{"__proto__":1,"constructor":2,"toString":3,"hasOwnProperty":4,"m":{"__proto__":5},"s":{"__proto__":6,"a":{"__proto__":7}}}',
      ),
    );
  });
});
