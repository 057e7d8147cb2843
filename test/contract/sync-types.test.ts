import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { inMemory, type Harness } from '../helpers/transports.js';
import { run, type Json, jobWhen } from '../helpers/queries.js';

let db: TestDatabase;
let api: Harness;

beforeAll(async () => {
  db = await createTestDatabase();
  await adminQuery(
    `CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
     CREATE TABLE public.everything (
       id integer PRIMARY KEY, n_small numeric(10,2), n_wide numeric(50,0), n_free numeric, i2 smallint, i4 integer, i8 bigint,
       f4 real, f8 double precision, b boolean, t text, vc varchar(20), ch char(5), d date, ts timestamp, tstz timestamptz,
       tm time, u uuid, j json, jb jsonb, raw bytea, ints integer[], texts text[], iv interval, m mood, updated_at timestamptz NOT NULL DEFAULT now());
     INSERT INTO public.everything VALUES
       (1, 12.34, 123456789012345678901234567890123456789012345, 3.14159265358979323846264338327950288419716939937510,
        -32768, 2147483647, 9007199254740993, 1.5, 0.1, true, E'comma, "quote"\\nnew line ü 😀', 'varchar', 'ab', '2024-02-29',
        '2024-02-29 13:14:15.123456', '2024-01-02 03:04:05.5+02', '13:14:15.5', 'fbc2bf30-a3e6-4eb7-96f5-5d949f0267dd',
        '{"a": [1, 2], "b": null}', '{"z": {"y": true}}', '\\xdeadbeef', '{1,NULL,3}', '{"a,b","c\\"d",NULL}',
        '1 year 2 mons 3 days 04:05:06.5', 'happy', now()),
       (2, -0.01, NULL, 'NaN', 0, 0, -9223372036854775808, '-Infinity', 'NaN', false, '', '', '', 'infinity',
        '-infinity', 'infinity', '00:00:00', NULL, '[]', '[]', '\\x', '{}', '{}', '-1 days +02:00:00', 'sad', now()),
       (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'Infinity', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, now());
     GRANT SELECT ON public.everything TO ${db.reader};`,
    db.database,
  );
  api = await inMemory.start();
}, 60_000);
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

async function syncSource(sourceId: string, body: object = {}): Promise<Json> {
  const response = await api.request(`/sources/${sourceId}/sync`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'Content-Type': 'application/json' },
  });
  expect(response.status).toBe(202);
  const sync = (await response.json()) as Json;
  return jobWhen(async (path) => (await (await api.request(path)).json()) as Json, sync.id as string);
}

describe('a PostgreSQL sync keeps every value exactly', () => {
  it('syncs every type and the lake holds the same values, with _synced_at', async () => {
    const created = (await (
      await api.request('/sources', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          connector: 'postgres',
          name: 'Types',
          config: { port: db.port, database: db.database },
          host: db.host,
          user: db.reader,
        }),
      })
    ).json()) as Json;
    await api.request(`/sources/${created.id}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        tables: [
          { schema: 'public', name: 'customers', enabled: false },
          { schema: 'public', name: 'orders', enabled: false },
        ],
      }),
    });
    const job = await syncSource(created.id);
    const logs = await api.home.db.all('SELECT message FROM source_logs');
    expect(job, JSON.stringify(logs)).toMatchObject({ kind: 'sync', status: 'succeeded', error: null });

    const described = (await (await api.request('/catalog/types/everything')).json()) as Json;
    expect(
      Object.fromEntries(described.columns.map((c: Json) => [c.name, `${c.type}${c.nullable ? '' : ' NOT NULL'}`])),
    ).toEqual({
      id: 'INTEGER NOT NULL',
      n_small: 'DECIMAL(10,2)',
      // Whole numbers wider than DECIMAL holds are exact BIGNUMs; a numeric holding NaN is a DOUBLE (decision 58).
      n_wide: 'BIGNUM',
      n_free: 'DOUBLE',
      i2: 'SMALLINT',
      i4: 'INTEGER',
      i8: 'BIGINT',
      f4: 'FLOAT',
      f8: 'DOUBLE',
      b: 'BOOLEAN',
      t: 'VARCHAR',
      vc: 'VARCHAR',
      ch: 'VARCHAR',
      d: 'DATE',
      ts: 'TIMESTAMP',
      tstz: 'TIMESTAMP WITH TIME ZONE',
      tm: 'TIME',
      u: 'UUID',
      j: 'JSON',
      jb: 'JSON',
      raw: 'BLOB',
      ints: 'INTEGER[]',
      texts: 'VARCHAR[]',
      iv: 'INTERVAL',
      m: "ENUM('sad', 'ok', 'happy')",
      updated_at: 'TIMESTAMP WITH TIME ZONE NOT NULL',
      _synced_at: 'TIMESTAMP WITH TIME ZONE NOT NULL',
    });

    const lake = await run(api, 'select * exclude (updated_at, _synced_at) from lake.types.everything order by id');
    expect(lake.data, JSON.stringify(lake.error)).toEqual([
      {
        id: 1,
        n_small: '12.34',
        n_wide: '123456789012345678901234567890123456789012345',
        n_free: 3.141592653589793,
        i2: -32768,
        i4: 2147483647,
        i8: '9007199254740993',
        f4: 1.5,
        f8: 0.1,
        b: true,
        t: 'comma, "quote"\nnew line ü 😀',
        vc: 'varchar',
        ch: 'ab',
        d: '2024-02-29',
        ts: '2024-02-29T13:14:15.123456',
        tstz: '2024-01-02T01:04:05.5Z',
        tm: '13:14:15.5',
        u: 'fbc2bf30-a3e6-4eb7-96f5-5d949f0267dd',
        j: { a: [1, 2], b: null },
        jb: { z: { y: true } },
        raw: '3q2+7w==',
        ints: [1, null, 3],
        texts: ['a,b', 'c"d', null],
        iv: 'P1Y2M3DT4H5M6.5S',
        m: 'happy',
      },
      {
        id: 2,
        n_small: '-0.01',
        n_wide: null,
        n_free: 'NaN',
        i2: 0,
        i4: 0,
        i8: '-9223372036854775808',
        f4: '-Infinity',
        f8: 'NaN',
        b: false,
        t: '',
        vc: '',
        ch: '',
        d: 'infinity',
        ts: '-infinity',
        tstz: 'infinity',
        tm: '00:00:00',
        u: null,
        j: [],
        jb: [],
        raw: '',
        ints: [],
        texts: [],
        iv: 'P-1DT2H',
        m: 'sad',
      },
      {
        id: 3,
        n_small: null,
        n_wide: null,
        n_free: null,
        i2: null,
        i4: null,
        i8: null,
        f4: null,
        f8: 'Infinity',
        b: null,
        t: null,
        vc: null,
        ch: null,
        d: null,
        ts: null,
        tstz: null,
        tm: null,
        u: null,
        j: null,
        jb: null,
        raw: null,
        ints: null,
        texts: null,
        iv: null,
        m: null,
      },
    ]);

    // The same values, compared with what the source itself says, as text.
    const source = (
      await adminQuery(
        "SELECT id, n_wide::text, n_free::float8::text AS n_free, i8::text, t, tstz AT TIME ZONE 'UTC' AS tstz_utc FROM public.everything ORDER BY id",
        db.database,
      )
    ).rows;
    expect(
      lake.data.map((r: Json) => [
        r.n_wide,
        r.n_free === null ? null : String(r.n_free),
        r.i8 === null ? null : String(r.i8),
        r.t,
      ]),
    ).toEqual(source.map((r) => [r.n_wide, r.n_free, r.i8, r.t]));
    const synced = await run(
      api,
      'select count(distinct _synced_at) as commits, min(_synced_at) is not null as stamped from lake.types.everything',
    );
    expect(synced.data).toEqual([{ commits: 1, stamped: true }]);
  });

  it("keeps rows of several MB whole (longer than the CSV reader's default line), on a full refresh and on a merge", async () => {
    await adminQuery(
      `CREATE TABLE public.wide_rows (id integer PRIMARY KEY, body text, doc jsonb, updated_at integer NOT NULL);
       INSERT INTO public.wide_rows SELECT g, repeat(md5(g::text), 100000), jsonb_build_object('k', repeat('v', 3000000 + g)), 1 FROM generate_series(1, 3) g;
       INSERT INTO public.wide_rows SELECT g, 'small', '{}', 1 FROM generate_series(4, 1000) g;
       GRANT SELECT ON public.wide_rows TO ${db.reader};`,
      db.database,
    );
    const created = (await (
      await api.request('/sources', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          connector: 'postgres',
          name: 'wide',
          config: { port: db.port, database: db.database },
          host: db.host,
          user: db.reader,
        }),
      })
    ).json()) as Json;
    await api.request(`/sources/${created.id}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        tables: created.tables.map((t: Json) => ({
          schema: 'public',
          name: t.name,
          enabled: t.name === 'wide_rows',
          ...(t.name === 'wide_rows' ? { mode: 'incremental', cursor_column: 'updated_at' } : {}),
        })),
      }),
    });
    const expected = (
      await adminQuery(
        "SELECT count(*)::int AS n, sum(length(body))::int AS body, sum(length(doc->>'k'))::int AS doc FROM public.wide_rows",
        db.database,
      )
    ).rows[0];
    const sums =
      "select count(*)::int as n, sum(length(body))::int as body, sum(length(doc->>'k'))::int as doc from lake.wide.wide_rows";
    const first = await syncSource(created.id);
    expect(first.status, JSON.stringify(await api.home.db.all('SELECT message FROM source_logs'))).toBe('succeeded');
    expect((await run(api, sums)).data).toEqual([expected]);
    // The next sync merges changed rows (one of them several MB) into the table on its primary key.
    await adminQuery(
      "UPDATE public.wide_rows SET body = repeat('z', 4000000), updated_at = 2 WHERE id IN (2, 5)",
      db.database,
    );
    const merged = await syncSource(created.id);
    expect(merged.status, JSON.stringify(await api.home.db.all('SELECT message FROM source_logs'))).toBe('succeeded');
    const after = (
      await adminQuery(
        "SELECT count(*)::int AS n, sum(length(body))::int AS body, sum(length(doc->>'k'))::int AS doc FROM public.wide_rows",
        db.database,
      )
    ).rows[0];
    expect((await run(api, sums)).data).toEqual([after]);
  }, 60_000);
});
