import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { createPostgresSource, run, syncSucceeded, type Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * A lake column that held intervals as text (as every synced interval did before they were typed, or a text column
 * the source retyped) becomes an INTERVAL stored as its three numbers: the catalog retypes a flat column into a
 * struct, and the earlier snapshot still reads its text.
 */
const db = useTestDatabase();
let api: Harness;

beforeAll(async () => {
  await adminQuery(
    `CREATE TABLE public.spans (id int PRIMARY KEY, iv text);
     INSERT INTO public.spans VALUES (1, '-1 day'), (2, '1 mon'), (3, '30 days'), (4, NULL);
     GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${db.reader};`,
    db.database,
  );
  api = await inMemory.start();
}, 60_000);

afterAll(async () => {
  await api?.close();
});

describe('a text column that becomes an interval', () => {
  it('is typed by the next sync, and the snapshot before still reads its text', async () => {
    const source = await createPostgresSource(api, db, 'retype');
    await syncSucceeded(api, source.id as string);
    const between = new Date().toISOString();

    await adminQuery('ALTER TABLE public.spans ALTER COLUMN iv TYPE interval USING iv::interval', db.database);
    await syncSucceeded(api, source.id as string);

    const typed = (await run(
      api,
      "select string_agg(id::varchar, ';' order by iv, id) as o, count(*) filter (where iv = '30 days') as n, typeof(any_value(iv)) as t from lake.retype.spans",
    )) as Json;
    expect(typed.status, JSON.stringify(typed.error)).toBe('succeeded');
    // PostgreSQL: -1 day; then 1 mon = 30 days; NULL last.
    expect(typed.data[0]).toEqual({ o: '1;2;3;4', n: 2, t: 'INTERVAL' });
    const old = (await run(
      api,
      `select typeof(any_value(iv)) as t, count(*) filter (where iv = '30 days') as n from lake.retype.spans AT (TIMESTAMP => TIMESTAMPTZ '${between}')`,
    )) as Json;
    expect(old.status, JSON.stringify(old.error)).toBe('succeeded');
    expect(old.data[0]).toEqual({ t: 'VARCHAR', n: 1 });
  });
});
