import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { compressionRegistry, CompressionType, tableFromIPC, Type } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { expectError, finished, type Json } from '../helpers/queries.js';
import { newMember } from '../helpers/members.js';
import { zstdCodec } from '../../src/service/queries/arrow-compressed.js';

/**
 * What a query is asked with besides its SQL: a default schema (unqualified names resolve there, grants hold as for
 * qualified ones) and parameter values (bound when it runs, never written into the SQL).
 */
describe.each(TRANSPORTS)('query schema and parameters over $name', (transport) => {
  let api: Harness;
  let org: string;
  let member: string;

  beforeAll(async () => {
    api = await transport.start();
    org = api.home.organization.id;
    await api.services.lake.writeTable(org, 'hr', 'salaries', "select 'Zebulon Quux' as name, 987654 as pay");
    const { userId, token } = await newMember(api, ['query:read', 'data:read']);
    member = token;
    await api.services.permissions.setEnabled(org, true);
    await api.services.permissions.grant(org, 'demo', 'orders', 'user', userId);
  });
  afterAll(async () => {
    await api.close();
  });

  const post = (body: object, init: { token?: string; key?: string } = {}): Promise<Response> =>
    api.request('/queries', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', ...(init.key ? { 'Idempotency-Key': init.key } : {}) },
      token: init.token,
    });
  const ask = async (body: object, token?: string): Promise<Json> => {
    const response = await post(body, { token });
    const submitted = (await response.json()) as Json;
    expect(response.status, JSON.stringify(submitted)).toBe(202);
    return finished(api, submitted.id as string, '&format=inline&limit=1000');
  };

  it('resolves unqualified names in the schema given, and shows it on the query', async () => {
    const done = await ask({ sql: 'select count(*) as n from orders', schema: 'demo' });
    expect(done).toMatchObject({ status: 'succeeded', schema: 'demo', data: [{ n: 5000 }] });
    // Qualified names still read where they say; the schema's case is the catalog's.
    const both = await ask({ sql: 'select count(*) as n from orders join hr.salaries on true', schema: 'DEMO' });
    expect(both).toMatchObject({ status: 'succeeded', schema: 'demo' });
    // A table read AT a version is found there too.
    const versions = (await (await api.request('/catalog/demo/orders/history')).json()) as Json;
    const at = await ask({
      sql: `select count(*) as n from orders AT (VERSION => ${versions.data[0].snapshot_id as number})`,
      schema: 'demo',
    });
    expect(at).toMatchObject({ status: 'succeeded', data: [{ n: 5000 }] });
    // Without a schema, an unqualified name is not found (as before).
    expect((await ask({ sql: 'select count(*) from orders' })).status).toBe('failed');
  });

  it('refuses a schema that does not exist or that the caller cannot read, alike', async () => {
    const missing = await expectError(
      await post({ sql: 'select 1', schema: 'nowhere' }),
      400,
      'parameter_invalid',
      'schema',
    );
    const hidden = await expectError(
      await post({ sql: 'select 1', schema: 'hr' }, { token: member }),
      400,
      'parameter_invalid',
      'schema',
    );
    expect(hidden.message.replace('hr', 'X')).toBe(missing.message.replace('nowhere', 'X'));
    await expectError(await post({ sql: 'select 1', schema: '' }), 400, 'parameter_invalid', 'schema');
  });

  it('holds grants for unqualified names exactly as for qualified ones', async () => {
    const granted = await ask({ sql: 'select count(*) as n from orders', schema: 'demo' }, member);
    expect(granted).toMatchObject({ status: 'succeeded', data: [{ n: 5000 }] });
    // demo.customers is not granted: refused by name, as `demo.customers` would be.
    const refused = await expectError(
      await post({ sql: 'select * from customers', schema: 'demo' }, { token: member }),
      403,
      'grant_table_denied',
    );
    expect(refused.message).toContain('customers');
    await expectError(
      await post({ sql: 'select * from demo.customers', schema: 'demo' }, { token: member }),
      403,
      'grant_table_denied',
    );
  });

  it('binds named and positional parameters, typed, and a value is never read as SQL', async () => {
    const named = await ask({
      sql: 'select count(*) as n from lake.demo.orders where order_id <= $top and status = $status',
      parameters: [
        { name: 'top', value: '100', type: 'INTEGER' },
        { name: 'status', value: 'shipped' },
      ],
    });
    const want = await ask({
      sql: "select count(*) as n from lake.demo.orders where order_id <= 100 and status = 'shipped'",
    });
    expect(named.status).toBe('succeeded');
    expect(named.data).toEqual(want.data);
    expect(named.parameters).toEqual([
      { name: 'top', value: '100', type: 'INTEGER' },
      { name: 'status', value: 'shipped' },
    ]);
    const positional = await ask({
      sql: 'select ? as a, ? as b, ? as c, ? as d, ? as e, ? as f, ? as g',
      parameters: [
        { value: '12.50', type: 'DECIMAL' },
        { value: '2024-02-29', type: 'DATE' },
        { value: 'true', type: 'BOOLEAN' },
        { value: null },
        { value: '9007199254740993', type: 'BIGINT' },
        { value: '2024-01-02 03:04:05', type: 'TIMESTAMP' },
        { value: '1.5e3', type: 'DOUBLE' },
      ],
    });
    expect(positional.status, JSON.stringify(positional)).toBe('succeeded');
    expect(positional.data).toEqual([
      { a: '12.50', b: '2024-02-29', c: true, d: null, e: '9007199254740993', f: '2024-01-02T03:04:05', g: 1500 },
    ]);
    const dollar = await ask({ sql: 'select $2 || $1 as s', parameters: [{ value: 'b' }, { value: 'a' }] });
    expect(dollar.data).toEqual([{ s: 'ab' }]);
    // An injection attempt is a value like any other.
    const hostile = "x' or 1=1; drop table lake.demo.orders; --";
    const injected = await ask({
      sql: 'select count(*) as n from lake.demo.orders where status = $s',
      parameters: [{ name: 's', value: hostile }],
    });
    expect(injected.data).toEqual([{ n: 0 }]);
    const echoed = await ask({ sql: 'select $s as s', parameters: [{ name: 's', value: hostile }] });
    expect(echoed.data).toEqual([{ s: hostile }]);
  });

  it('refuses parameters that do not match the SQL before it runs, naming what is wrong', async () => {
    const cases: [object, string][] = [
      [{ sql: 'select $a as a' }, 'sql'],
      [{ sql: 'select $a as a', parameters: [] }, 'parameters'],
      [{ sql: 'select $a as a', parameters: [{ name: 'b', value: '1' }] }, 'parameters[0].name'],
      [{ sql: 'select $a as a', parameters: [{ value: '1' }] }, 'parameters'],
      [{ sql: 'select ? as a, ? as b', parameters: [{ value: '1' }] }, 'parameters'],
      [{ sql: 'select 1 as a', parameters: [{ value: '1' }] }, 'parameters'],
      [{ sql: 'select ? as a', parameters: [{ value: 'ten', type: 'INTEGER' }] }, 'parameters[0].value'],
      [{ sql: 'select ? as a', parameters: [{ value: '2024-13', type: 'DATE' }] }, 'parameters[0].value'],
      [{ sql: 'select ? as a', parameters: [{ value: '1', type: 'MONEY' }] }, 'parameters[0].type'],
      [{ sql: 'select $a as a', parameters: [{ name: 'a b', value: '1' }] }, 'parameters[0].name'],
      [
        {
          sql: 'select $a as a',
          parameters: [
            { name: 'a', value: '1' },
            { name: 'A', value: '2' },
          ],
        },
        'parameters[1].name',
      ],
    ];
    for (const [body, param] of cases) await expectError(await post(body), 400, 'parameter_invalid', param);
    // A value DuckDB itself cannot read as its type fails the query, with DuckDB's reason.
    const bad = await ask({ sql: 'select ? as a', parameters: [{ value: '2024-02-30', type: 'DATE' }] });
    expect(bad.status).toBe('failed');
    expect(bad.error.message).toMatch(/DATE/);
  });

  it('binds an Idempotency-Key to the schema and the parameter values too', async () => {
    const key = `k-${Math.random()}`;
    const body = { sql: 'select $v as v', parameters: [{ name: 'v', value: '1' }] };
    expect((await post(body, { key })).status).toBe(202);
    const replayed = await post(body, { key });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    await expectError(
      await post({ ...body, parameters: [{ name: 'v', value: '2' }] }, { key }),
      409,
      'idempotency_key_reused',
    );
    await expectError(await post({ ...body, schema: 'demo' }, { key }), 409, 'idempotency_key_reused');
  });

  it('timeout_seconds shortens the server’s time limit, never lengthens it', async () => {
    const slow = await ask({ sql: 'select count(*) from range(1000000000000)', timeout_seconds: 1 });
    expect(slow).toMatchObject({ status: 'failed', timeout_seconds: 1, error: { code: 'query_timeout' } });
    expect(slow.error.message).toContain('1 s');
    const capped = await ask({ sql: 'select 1 as one', timeout_seconds: 10_000_000 });
    expect(capped.timeout_seconds).toBe(300);
    await expectError(await post({ sql: 'select 1', timeout_seconds: 0 }), 400, 'parameter_invalid', 'timeout_seconds');
  });

  it('row_limit keeps the first rows, in order, and says when it cut', async () => {
    const cut = await ask({ sql: 'select range as n from range(100) order by n desc', row_limit: 3 });
    expect(cut).toMatchObject({ status: 'succeeded', row_limit: 3, row_count: 3, truncated: true });
    expect(cut.data).toEqual([{ n: 99 }, { n: 98 }, { n: 97 }]);
    const whole = await ask({ sql: 'select range as n from range(100)', row_limit: 100 });
    expect(whole).toMatchObject({ row_count: 100, truncated: false });
    const none = await ask({ sql: 'select range as n from range(100)', row_limit: 0 });
    expect(none).toMatchObject({ row_count: 0, truncated: true, columns: ['n'] });
    expect((await ask({ sql: 'select 1 as n' })).truncated).toBe(false);
  });

  it('byte_limit keeps the first rows whose result file fits', async () => {
    const sql = 'select range as n, repeat(md5(range::varchar), 20) as s from range(20000) order by n';
    const cut = await ask({ sql, byte_limit: 50_000 });
    expect(cut).toMatchObject({ status: 'succeeded', truncated: true, byte_limit: 50_000 });
    expect(cut.row_count).toBeGreaterThan(0);
    expect(cut.row_count).toBeLessThan(20_000);
    expect(cut.data[0]).toMatchObject({ n: 0 });
    const files = (await (await api.request(`/queries/${cut.id}`)).json()) as Json;
    expect(files.files[0].bytes).toBeLessThanOrEqual(50_000);
    expect((await ask({ sql: 'select 1 as n', byte_limit: 1_000_000 })).truncated).toBe(false);
  });

  it('dry_run answers with the columns and their types, or the error, without running', async () => {
    const started = Date.now();
    const response = await post({
      sql: 'select count(*) as n, $label as label from range(1000000000000)',
      parameters: [{ name: 'label', value: '2024-01-01', type: 'DATE' }],
      dry_run: true,
    });
    expect(response.status).toBe(200);
    const checked = (await response.json()) as Json;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(checked).toMatchObject({
      status: 'succeeded',
      dry_run: true,
      row_count: 0,
      result_columns: [
        { name: 'n', type: 'BIGINT' },
        { name: 'label', type: 'DATE' },
      ],
    });
    const broken = await post({ sql: 'select nope from lake.demo.orders', dry_run: true });
    expect(broken.status).toBe(200);
    expect((await broken.json()) as Json).toMatchObject({
      status: 'failed',
      dry_run: true,
      error: { code: 'query_failed', message: expect.stringContaining('nope') },
    });
    // The guard's refusals are the same as for any query; EXPLAIN ANALYZE, which runs the query, is no dry run.
    await expectError(await post({ sql: 'drop table x', dry_run: true }), 400, 'write_not_allowed', 'sql');
    await expectError(
      await post({ sql: 'explain analyze select 1', dry_run: true }),
      400,
      'parameter_invalid',
      'dry_run',
    );
    await expectError(await post({ sql: 'select 1', row_limit: 1e300 }), 400, 'parameter_invalid', 'row_limit');
  });

  it('tags show on the query and its job, are bounded, and usage sums by them', async () => {
    const before = ((await (await api.request('/usage')).json()) as Json).by_tag as Json[];
    const count = (tags: Json[], tag: string): number => tags.find((t) => t.tag === tag)?.queries_run ?? 0;
    const done = await ask({ sql: 'select 1 as one', tags: ['team:finance', 'dash/revenue'] });
    expect(done.tags).toEqual(['team:finance', 'dash/revenue']);
    await ask({ sql: 'select 2 as two', tags: ['team:finance'] });
    const job = (await (await api.request(`/jobs/${done.id}`)).json()) as Json;
    expect(job.tags).toEqual(['team:finance', 'dash/revenue']);
    const usage = (await (await api.request('/usage')).json()) as Json;
    expect(count(usage.by_tag, 'team:finance') - count(before, 'team:finance')).toBe(2);
    expect(count(usage.by_tag, 'dash/revenue') - count(before, 'dash/revenue')).toBe(1);
    const finance = (usage.by_tag as Json[]).find((t) => t.tag === 'team:finance') as Json;
    expect(finance.result_bytes).toBeGreaterThan(0);
    expect(finance.cost).toBeGreaterThan(0);
    for (const tags of [['a b'], ['x'.repeat(65)], Array.from({ length: 11 }, (_, i) => `t${i}`), ['a', 'a'], ['']])
      await expectError(await post({ sql: 'select 1', tags }), 400, 'parameter_invalid');
  });

  it('file_format=csv serves the result as RFC 4180 CSV through the same signed, Range-capable links', async () => {
    const done = await ask({
      sql: `select range as n, case when range = 1 then 'a,"b"' when range = 2 then 'two
lines' end as s, timestamptz '2024-01-01 12:00:00+00' + to_hours(range) as at from range(3) order by n`,
    });
    const query = (await (await api.request(`/queries/${done.id}?format=files&file_format=csv`)).json()) as Json;
    const file = query.files[0] as Json;
    expect(file.url).toContain('file_format=csv');
    const response = await api.request(file.url, { token: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/csv');
    expect(response.headers.get('content-disposition')).toContain(`${done.id}.csv`);
    const text = await response.text();
    expect(text).toBe(
      'n,s,at\r\n0,,2024-01-01 12:00:00+00\r\n1,"a,""b""",2024-01-01 13:00:00+00\r\n2,"two\nlines",2024-01-01 14:00:00+00\r\n',
    );
    expect(file.bytes).toBe(Buffer.byteLength(text));
    const part = await api.request(file.url, { token: null, headers: { Range: 'bytes=0-5' } });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe('n,s,at');
    // The job's result link takes the same choice; the Parquet link is unchanged.
    const job = (await (await api.request(`/jobs/${done.id}/result?file_format=csv`)).json()) as Json;
    expect(job.files[0]).toMatchObject({ bytes: file.bytes, url: expect.stringContaining('file_format=csv') });
    const parquet = (await (await api.request(`/queries/${done.id}`)).json()) as Json;
    expect(parquet.files[0].url).not.toContain('file_format');
    // A form that cannot be made now is a 503 to retry, and nothing half-made stays: here a directory is in the way.
    const blocked = await ask({ sql: 'select 1 as n' });
    const dir = api.services.lake.layout.resultDir(api.home.organization.id, blocked.id as string);
    mkdirSync(join(dir, 'result.csv.partial'));
    const refused = await api.request(`/queries/${blocked.id}?format=files&file_format=csv`);
    expect(refused.headers.get('retry-after')).toBe('10');
    await expectError(refused, 503, 'service_unavailable');
    rmSync(join(dir, 'result.csv.partial'), { recursive: true });
    expect((await api.request(`/queries/${blocked.id}?format=files&file_format=csv`)).status).toBe(200);
    await expectError(
      await api.request(`/queries/${done.id}?format=files&file_format=xml`),
      400,
      'parameter_invalid',
      'file_format',
    );
  });

  it('file_format=arrow serves the result as one Arrow IPC stream, batch by batch, through the same links', async () => {
    const done = await ask({
      sql: `select range as id, range * 2.5 as amount, 'c' || (range % 7) as label, date '2024-01-01' + range::int as day,
              case when range % 2 = 0 then null else [range, 1] end as list
            from range(150000) order by id`,
    });
    const query = (await (await api.request(`/queries/${done.id}?format=files&file_format=arrow`)).json()) as Json;
    const file = query.files[0] as Json;
    expect(file.url).toContain('file_format=arrow');
    const response = await api.request(file.url, { token: null });
    expect(response.headers.get('content-type')).toBe('application/vnd.apache.arrow.stream');
    expect(response.headers.get('content-disposition')).toContain(`${done.id}.arrows`);
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(bytes.byteLength).toBe(file.bytes);
    const table = tableFromIPC(bytes);
    expect(table.numRows).toBe(150_000);
    // Several record batches (a bounded number of rows each), one schema.
    expect(table.batches.length).toBeGreaterThan(1);
    expect(table.schema.fields.map((f) => `${f.name}:${String(f.type)}`)).toEqual([
      'id:Int64',
      'amount:Decimal[21e+1]',
      'label:Utf8',
      'day:Date32<DAY>',
      'list:List<Int64>',
    ]);
    const row = table.get(149_999)?.toJSON() as Record<string, unknown>;
    expect(row.id).toBe(149_999n);
    expect(row.label).toBe('c3');
    expect([...(row.list as Iterable<bigint>)]).toEqual([149_999n, 1n]);
    expect(table.get(0)?.toJSON().list).toBeNull();
    // A result of no rows is its schema alone; Range works as for every form.
    const empty = await ask({ sql: 'select 1 as n where false' });
    const emptyLink = (await (await api.request(`/queries/${empty.id}?format=files&file_format=arrow`)).json()) as Json;
    const emptyTable = tableFromIPC(
      new Uint8Array(await (await api.request(emptyLink.files[0].url, { token: null })).arrayBuffer()),
    );
    expect(emptyTable.numRows).toBe(0);
    expect(emptyTable.schema.fields.map((f) => f.name)).toEqual(['n']);
    const part = await api.request(file.url, { token: null, headers: { Range: 'bytes=0-3' } });
    expect(part.status).toBe(206);
    expect([...new Uint8Array(await part.arrayBuffer())]).toEqual([255, 255, 255, 255]);
  });

  it('file_format=arrow_zstd serves the same rows with zstd bodies and repetitive text as a dictionary', async () => {
    // The reader's side of compressed bodies: a client registers a zstd codec, as pyarrow and arrow-rs have built in.
    // lake's own codec: its WebAssembly module must be started only once a process, and the server runs in this one.
    compressionRegistry.set(CompressionType.ZSTD, await zstdCodec());
    const done = await ask({
      sql: `select range as id, 'c' || (range % 7) as label, 'unique ' || range as note,
              case when range % 3 = 0 then null when range > 290000 then 'late' else 'early' || (range % 2) end as phase,
              'c' || (range % 7) as label
            from range(300000) order by id`,
    });
    const link = async (form: string): Promise<Json> =>
      ((await (await api.request(`/queries/${done.id}?format=files&file_format=${form}`)).json()) as Json).files[0];
    const file = await link('arrow_zstd');
    expect(file.url).toContain('file_format=arrow_zstd');
    const response = await api.request(file.url, { token: null });
    expect(response.headers.get('content-type')).toBe('application/vnd.apache.arrow.stream');
    expect(response.headers.get('content-disposition')).toContain(`${done.id}.arrows`);
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(bytes.byteLength).toBe(file.bytes);
    const plainFile = await link('arrow');
    const plainBytes = new Uint8Array(await (await api.request(plainFile.url, { token: null })).arrayBuffer());
    // A result of no rows, asked for before the long comparisons below: the server shares this process, and a
    // request sent just as their seconds end can meet its keep-alive timeout closing the socket (ECONNRESET).
    const empty = await ask({ sql: "select 'a' as t where false" });
    const emptyLink = (await (
      await api.request(`/queries/${empty.id}?format=files&file_format=arrow_zstd`)
    ).json()) as Json;
    const emptyBytes = new Uint8Array(await (await api.request(emptyLink.files[0].url, { token: null })).arrayBuffer());
    const plain = tableFromIPC(plainBytes);
    // Compressed: a fraction of the plain stream's bytes; both forms are kept, side by side.
    expect(file.bytes).toBeLessThan(plainFile.bytes / 3);
    const table = tableFromIPC(bytes);
    expect(table.numRows).toBe(300_000);
    // The three row groups joined into one batch (up to 1,048,576 rows a batch, so zstd sees what repeats across
    // them); deltas between joined batches are tested in test/service/arrow-compressed.test.ts.
    expect(table.batches.length).toBe(1);
    // Text that repeats is a dictionary (the repeated name as the result has it); unique text stays text.
    expect(
      table.schema.fields.map((f) => `${f.name}:${f.type.typeId === Type.Dictionary ? 'dictionary' : String(f.type)}`),
    ).toEqual(['id:Int64', 'label:dictionary', 'note:Utf8', 'phase:dictionary', 'label_1:dictionary']);
    // Every value equals the plain stream's, including nulls and a value first seen in the last row group.
    for (const position of [0, 1, 2, 3, 4]) {
      expect([...(table.getChildAt(position) ?? [])]).toEqual([...(plain.getChildAt(position) ?? [])]);
    }
    expect(table.get(299_999)?.toJSON()).toMatchObject({ id: 299_999n, phase: 'late', note: 'unique 299999' });
    expect(table.get(3)?.toJSON().phase).toBeNull();
    // A result of no rows is its schema alone.
    const emptyTable = tableFromIPC(emptyBytes);
    expect(emptyTable.numRows).toBe(0);
    expect(emptyTable.schema.fields.map((f) => f.name)).toEqual(['t']);
  });
});
