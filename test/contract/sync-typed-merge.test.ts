import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { createPostgresSource, jsonClient, run, syncSucceeded, type Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * citext, arrays of two dimensions, whole numbers wider than 38 digits and numerics holding NaN, through an
 * incremental sync that merges changed rows into the table (its earlier files read back with their types, the
 * merged ones written as the table has them), and one whose changes no longer fit its types (the table read whole).
 */
const db = useTestDatabase();
let api: Harness;

beforeAll(async () => {
  await adminQuery(
    `CREATE EXTENSION IF NOT EXISTS citext;
     CREATE TABLE public.people (id int PRIMARY KEY, ci citext UNIQUE, m int[], w numeric(45,0), n numeric,
       updated_at int NOT NULL);
     INSERT INTO public.people VALUES
       (1, 'Ada', '{{1,2},{3,4}}', 123456789012345678901234567890123456789012345, 'NaN', 1),
       (2, 'BOB', '{{5,NULL}}', -1, 1.5, 1), (3, 'Émile', NULL, NULL, 'Infinity', 1);
     GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${db.reader};`,
    db.database,
  );
  api = await inMemory.start();
}, 60_000);

afterAll(async () => {
  await api?.close();
});

const PROBE = `select string_agg(id::varchar, ';' order by ci, id) as o,
    count(*) filter (where ci = 'ada' or ci = 'émile') as folded,
    sum(m[1][2]) as m12, max(w)::varchar as w, count(*) filter (where n = 'NaN') as nan,
    (select count(*) from {t} a join {t} b on a.ci = b.ci) as pairs,
    string_agg(typeof(ci) || typeof(m) || typeof(w) || typeof(n), ',') filter (where id = 1) as types
  from {t}`;

async function sameAsSource(): Promise<void> {
  const source = (
    await adminQuery(
      `SELECT string_agg(id::text, ';' ORDER BY ci, id) AS o,
         count(*) FILTER (WHERE ci = 'ada' OR ci = 'émile') AS folded, sum(m[1][2]) AS m12, max(w)::text AS w,
         count(*) FILTER (WHERE n = 'NaN') AS nan,
         (SELECT count(*) FROM public.people a JOIN public.people b ON a.ci = b.ci) AS pairs
       FROM public.people`,
      db.database,
    )
  ).rows[0] as Json;
  const lake = (await run(api, PROBE.replaceAll('{t}', 'lake.typed.people'))) as Json;
  expect(lake.status, JSON.stringify(lake.error)).toBe('succeeded');
  const { types, ...answers } = lake.data[0] as Json;
  expect(types).toBe('VARCHARINTEGER[][]BIGNUMDOUBLE');
  expect(Object.fromEntries(Object.entries(answers).map(([k, v]) => [k, v === null ? null : String(v)]))).toEqual(
    Object.fromEntries(Object.entries(source).map(([k, v]) => [k, v === null ? null : String(v)])),
  );
}

describe('an incremental table of value-typed columns', () => {
  it('merges changed rows with the table’s types, and is read whole when they no longer fit', async () => {
    const client = jsonClient(api);
    const source = await createPostgresSource(api, db, 'typed');
    await client('PATCH', `/sources/${source.id}`, {
      tables: [{ schema: 'public', name: 'people', mode: 'incremental', cursor_column: 'updated_at' }],
    });
    await syncSucceeded(api, source.id as string);
    await sameAsSource();

    // Fits: merged on the key into the typed table.
    await adminQuery(
      `UPDATE public.people SET ci = 'ADA', m = '{{7,8}}', w = w + 1, n = -3, updated_at = 2 WHERE id = 1;
       INSERT INTO public.people VALUES (4, 'bob2', '{{9,10},{11,12}}', 7, 'NaN', 2);`,
      db.database,
    );
    await syncSucceeded(api, source.id as string);
    await sameAsSource();
    const files = (await run(api, "select count(*) as n from lake.typed.people where ci = 'Ada'")) as Json;
    expect(files.data[0].n).toBe(1);

    // A one-dimensional array no longer fits INTEGER[][]: the table is read whole, its arrays JSON from now on.
    await adminQuery(`UPDATE public.people SET m = '{1}', updated_at = 3 WHERE id = 2`, db.database);
    await syncSucceeded(api, source.id as string);
    const retyped = (await run(
      api,
      'select typeof(any_value(m)) as t, count(*) as n, max(ci) as top from lake.typed.people',
    )) as Json;
    expect(retyped.data?.[0], JSON.stringify(retyped.error)).toEqual({ t: 'JSON', n: 4, top: 'Émile' });
  });
});
