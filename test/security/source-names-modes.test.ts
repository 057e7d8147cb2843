import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useLogicalSource } from '../helpers/postgres.js';
import { jsonClient, run, syncEnded, type Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * source-names.test.ts holds a PostgreSQL source's odd names through a full sync; these are held through every
 * mode: a schema with a quote and a space, tables `T` and `t`, `a/b` with a quoted column, a reserved word and a
 * column named like lake's own, a dot, PostgreSQL's longest name and non-ASCII ones, read whole, by cursor and
 * from the write-ahead log (pgoutput names each relation apart from its namespace: nothing is parsed from text).
 */
const SCHEMA = 'we"ird s';
const LONG = 'n'.repeat(63);
const q = (name: string): string => `"${name.replaceAll('"', '""')}"`;
const TABLES = ['T', 't', 'a/b', 'x.y', LONG, 'Åäö 😀'];
const CURSORS: Record<string, string> = { T: 'id', t: 'id', 'a/b': 'x"y', 'x.y': 'id', [LONG]: LONG, 'Åäö 😀': 'ñ' };

const S = q(SCHEMA);
const source = useLogicalSource(`CREATE SCHEMA ${S};
  CREATE TABLE ${S}."T" (id int PRIMARY KEY, v int); INSERT INTO ${S}."T" VALUES (1, 1);
  CREATE TABLE ${S}.t (id int PRIMARY KEY, w int); INSERT INTO ${S}.t VALUES (1, 2), (2, 2);
  CREATE TABLE ${S}."a/b" ("x""y" int PRIMARY KEY, _synced_at text, "sp ace" int, "select" int);
  INSERT INTO ${S}."a/b" VALUES (1, 'theirs', 2, 3);
  CREATE TABLE ${S}."x.y" (id int PRIMARY KEY); INSERT INTO ${S}."x.y" VALUES (7);
  CREATE TABLE ${S}.${q(LONG)} (${q(LONG)} int PRIMARY KEY); INSERT INTO ${S}.${q(LONG)} VALUES (9);
  CREATE TABLE ${S}."Åäö 😀" ("ñ" int PRIMARY KEY); INSERT INTO ${S}."Åäö 😀" VALUES (5);`);
let api: Harness;
let call: ReturnType<typeof jsonClient>;

beforeAll(async () => {
  api = await inMemory.start();
  call = jsonClient(api);
});

afterAll(async () => {
  await api?.close();
});

/** Every row of a lake table, its sync time left out, in key order. */
async function lakeRows(schema: string, table: string): Promise<Json[]> {
  const result = await run(api, `select * exclude (_synced_at) from ${schema}.${q(table)} order by 1`);
  expect(result.status, JSON.stringify(result.error)).toBe('succeeded');
  return result.data as Json[];
}

describe('odd names from a PostgreSQL source, in every mode', () => {
  for (const [index, mode] of (['full', 'incremental', 'cdc'] as const).entries()) {
    it(`each table lands in a table of its own and follows its source (${mode})`, async () => {
      const schema = `odd_${mode}`;
      const created = await call('POST', '/sources', source.sourceBody(schema, { schemas: [SCHEMA] }));
      const discovered = created.tables as Json[];
      // The connection test reads every table by its name, in one statement.
      expect(await call('POST', `/sources/${created.id}/test`)).toMatchObject({ ok: true, reason: null });
      expect(discovered.map((t) => t.name).sort()).toEqual([...TABLES].sort());
      const lakeName = (name: string): string => discovered.find((t) => t.name === name)?.lake_table as string;
      expect(lakeName('T')).toBe('we"ird s_T');
      expect(lakeName('t')).toBe('we"ird s_t_2');
      expect(lakeName('a/b')).toBe('we"ird s_a_b');
      await call('PATCH', `/sources/${created.id}`, {
        tables: discovered.map((t) => ({
          schema: t.schema,
          name: t.name,
          mode,
          ...(mode === 'incremental' ? { cursor_column: CURSORS[t.name as string] } : {}),
        })),
      });
      // Each mode's changes are its own (the three tests share the source): a row of x.y to delete after the first sync.
      const key = 10 + index;
      await source.admin.query(`INSERT INTO ${q(SCHEMA)}."x.y" VALUES (${key})`);
      expect((await syncEnded(api, created.id as string)).status).toBe('succeeded');
      await source.admin.query(
        `INSERT INTO ${q(SCHEMA)}.t VALUES (${key}, 3); UPDATE ${q(SCHEMA)}."a/b" SET "sp ace" = ${key}, "x""y" = ${key};
         INSERT INTO ${q(SCHEMA)}."Åäö 😀" VALUES (${key}); DELETE FROM ${q(SCHEMA)}."x.y"`,
      );
      expect((await syncEnded(api, created.id as string)).status).toBe('succeeded');
      const sourceCount = Number((await source.admin.query(`SELECT count(*) AS n FROM ${q(SCHEMA)}.t`)).rows[0].n);
      expect(await lakeRows(schema, lakeName('t'))).toHaveLength(sourceCount);
      expect(await lakeRows(schema, lakeName('T'))).toEqual([{ id: 1, v: 1 }]);
      expect(await lakeRows(schema, lakeName(LONG))).toEqual([{ [LONG]: 9 }]);
      expect((await lakeRows(schema, lakeName('Åäö 😀'))).at(-1)).toEqual({ ñ: key });
      const moved = await lakeRows(schema, lakeName('a/b'));
      expect(moved.at(-1)).toEqual({ 'x"y': key, _synced_at_2: 'theirs', 'sp ace': key, select: 3 });
      // A full sync and cdc follow the delete and the moved key; an incremental one reads neither.
      expect(await lakeRows(schema, lakeName('x.y'))).toEqual(mode === 'incremental' ? [{ id: key }] : []);
      if (mode !== 'incremental') expect(moved).toHaveLength(1);
    }, 60_000);
  }
});
