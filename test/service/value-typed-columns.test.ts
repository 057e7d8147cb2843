import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planTableRead } from '../../src/service/syncs/pg-table-plan.js';
import { planColumn, planMergedColumn } from '../../src/service/syncs/pg-types.js';
import type { SyncReporter, TableTask } from '../../src/service/syncs/types.js';
import { adminQuery, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

/**
 * Columns whose lake type depends on the values read (decision 58): numerics without precision or wider than 38
 * digits, and arrays by their dimensions. An incremental read whose changed values do not fit the table's type reads
 * the table whole and types it again; one whose values fit keeps the table's type. A table synced while intervals,
 * such numerics or citext were plain text is read whole once, and typed (decisions 57 and 58).
 */
describe('an incremental read into a table typed by its values', () => {
  let db: TestDatabase;
  let client: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase();
    await adminQuery(
      `CREATE EXTENSION citext;
       CREATE TABLE public.t (id int PRIMARY KEY, n numeric, w numeric(45,0), m int[], ci citext, iv interval,
         updated_at timestamptz NOT NULL DEFAULT '2001-01-01');
       INSERT INTO public.t (id, n, w, m) VALUES (1, 1.25, 123456789012345678901234567890123456789012345, '{{1,2},{3,4}}'),
         (2, 'NaN', 0, '{}');`,
      db.database,
    );
    client = new pg.Client({ host: db.host, port: db.port, database: db.database, user: 'postgres' });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  const task: TableTask = {
    table: {
      schema: 'public',
      name: 't',
      columns: [],
      primaryKey: ['id'],
      estimatedRows: 2,
      enabled: true,
      mode: 'incremental',
      cursorColumn: 'updated_at',
    },
    key: 'public.t',
    lakeSchema: 's',
    lakeTable: 't',
    incremental: true,
    softDeletes: false,
  };
  const state = {
    cursorValue: '2000-01-01 00:00:00+00',
    columns: [
      { name: 'id', type: 'integer' },
      { name: 'n', type: 'numeric' },
      { name: 'w', type: 'numeric(45,0)' },
      { name: 'm', type: 'integer[]' },
      { name: 'ci', type: 'citext' },
      { name: 'iv', type: 'interval' },
      { name: 'updated_at', type: 'timestamp with time zone' },
    ],
    lakeTable: 't',
  };
  const reporter = { schemaChange: () => undefined } as unknown as SyncReporter;
  const plan = (inLake: Record<string, string>) =>
    planTableRead(
      client,
      task,
      state,
      2,
      reporter,
      () => undefined,
      new Map(
        Object.entries({
          id: 'INTEGER',
          ci: 'VARCHAR COLLATE NOCASE',
          iv: 'INTERVAL',
          updated_at: 'TIMESTAMP WITH TIME ZONE',
          ...inLake,
        }),
      ),
    );
  const typesOf = (read: Awaited<ReturnType<typeof plan>>) =>
    Object.fromEntries(read.plans.map((p) => [p.name, p.lakeType]));

  it('keeps the table and its types when the changed values fit them', async () => {
    const read = await plan({ n: 'DOUBLE', w: 'BIGNUM', m: 'INTEGER[][]' });
    expect(read.incremental).toBe(true);
    expect(typesOf(read)).toMatchObject({ n: 'DOUBLE', w: 'BIGNUM', m: 'INTEGER[][]' });
  });

  it('reads the table whole and types it by its values when they do not fit', async () => {
    const whole = { n: 'DOUBLE', w: 'BIGNUM', m: 'INTEGER[][]', ci: 'VARCHAR COLLATE NOCASE', iv: 'INTERVAL' };
    for (const inLake of <Record<string, string>[]>[
      // NaN does not fit a DECIMAL; 45 digits do not; two-dimensional values do not fit a list of integers
      { n: 'DECIMAL(38,2)', w: 'BIGNUM', m: 'INTEGER[][]' },
      { n: 'DOUBLE', w: 'DECIMAL(38,0)', m: 'INTEGER[][]' },
      { n: 'DOUBLE', w: 'BIGNUM', m: 'INTEGER[]' },
      // tables synced before these were typed hold them as text
      { n: 'VARCHAR', w: 'BIGNUM', m: 'INTEGER[][]' },
      { n: 'DOUBLE', w: 'VARCHAR', m: 'INTEGER[][]' },
      { n: 'DOUBLE', w: 'BIGNUM', m: 'INTEGER[][]', ci: 'VARCHAR' },
      { n: 'DOUBLE', w: 'BIGNUM', m: 'INTEGER[][]', iv: 'VARCHAR' },
    ]) {
      const read = await plan(inLake);
      expect(read.incremental, JSON.stringify(inLake)).toBe(false);
      expect(read.where).toBe('');
      expect(typesOf(read)).toMatchObject(whole);
    }
  });

  it('types changed rows whose arrays are all empty as the table has them', async () => {
    await adminQuery(`UPDATE public.t SET m = '{}', updated_at = '2002-01-01'`, db.database);
    const read = await plan({ n: 'DOUBLE', w: 'BIGNUM', m: 'INTEGER[][][]' });
    expect(read.incremental).toBe(true);
    expect(typesOf(read).m).toBe('INTEGER[][][]');
  });
});

describe('planning one column', () => {
  it('makes citext a case-insensitive text wherever its extension lives', () => {
    for (const type of ['citext', 'public.citext', 'ext.citext', '"My ext".citext'])
      expect(planColumn('ci', type).lakeType, type).toBe('VARCHAR COLLATE NOCASE');
    expect(planColumn('ci', 'mycitext').lakeType).toBe('VARCHAR');
  });

  it('keeps intervals, numerics and citext a table holds as plain text as text when changes merge into it', () => {
    for (const type of ['interval', 'interval day to second(3)']) {
      expect(planMergedColumn('iv', type, 'VARCHAR').lakeType).toBe('VARCHAR');
      expect(planMergedColumn('iv', type, 'INTERVAL').lakeType).toBe('INTERVAL');
      expect(planMergedColumn('iv', type, undefined).lakeType).toBe('INTERVAL');
    }
    // Only those fall back: an integer is planned as an integer whatever the lake holds.
    expect(planMergedColumn('n', 'integer', 'VARCHAR').lakeType).toBe('INTEGER');
    for (const type of ['numeric', 'numeric(50,10)']) {
      const facts = { moneyScale: 2, numericShapes: new Map([['n', { scale: 0, integerDigits: 0, special: true }]]) };
      expect(planMergedColumn('n', type, 'VARCHAR', undefined, facts).lakeType).toBe('VARCHAR');
      expect(planMergedColumn('n', type, 'DOUBLE', undefined, facts).lakeType).toBe('DOUBLE');
    }
    expect(planMergedColumn('n', 'numeric(12,2)', 'VARCHAR').lakeType).toBe('DECIMAL(12,2)');
    expect(planMergedColumn('ci', 'citext', 'VARCHAR').lakeType).toBe('VARCHAR');
    expect(planMergedColumn('ci', 'citext', 'VARCHAR COLLATE NOCASE').lakeType).toBe('VARCHAR COLLATE NOCASE');
  });

  it('nests arrays as deep as their values, and makes JSON of values of different dimensions', () => {
    const facts = (depth: number | undefined) => ({ moneyScale: 2, arrayDepths: new Map([['a', depth]]) });
    expect(planColumn('a', 'integer[]', undefined, facts(3)).lakeType).toBe('INTEGER[][][]');
    expect(planColumn('a', 'numeric(5,2)[]', undefined, facts(2)).lakeType).toBe('DECIMAL(5,2)[][]');
    expect(planColumn('a', 'character(3)[]', undefined, facts(2)).lakeType).toBe('VARCHAR[][]');
    expect(planColumn('a', 'text[]', undefined, facts(undefined)).lakeType).toBe('VARCHAR[]');
    expect(planColumn('a', 'text[]', undefined, facts(0)).lakeType).toBe('JSON');
  });
});
