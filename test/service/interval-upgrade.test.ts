import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planTableRead } from '../../src/service/syncs/pg-table-plan.js';
import { planMergedColumn } from '../../src/service/syncs/pg-types.js';
import type { SyncReporter, TableTask } from '../../src/service/syncs/types.js';
import { adminQuery, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

/** A lake table synced while intervals were text, met by an incremental sync that now types them. */
describe('an incremental read into a table whose intervals the lake holds as text', () => {
  let db: TestDatabase;
  let client: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase();
    await adminQuery(
      `CREATE TABLE public.spans (id int PRIMARY KEY, iv interval, updated_at timestamptz NOT NULL DEFAULT now());
       INSERT INTO public.spans (id, iv) VALUES (1, '-1 day'), (2, '1 mon');`,
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
      name: 'spans',
      columns: [],
      primaryKey: ['id'],
      estimatedRows: 2,
      enabled: true,
      mode: 'incremental',
      cursorColumn: 'updated_at',
    },
    key: 'public.spans',
    lakeSchema: 'sem',
    lakeTable: 'spans',
    incremental: true,
    softDeletes: false,
  };
  const state = {
    cursorValue: '2000-01-01 00:00:00+00',
    columns: [
      { name: 'id', type: 'integer' },
      { name: 'iv', type: 'interval' },
      { name: 'updated_at', type: 'timestamp with time zone' },
    ],
    lakeTable: 'spans',
  };
  const reporter = { schemaChange: () => undefined } as unknown as SyncReporter;
  const plan = (ivInLake: string) =>
    planTableRead(
      client,
      task,
      state,
      2,
      reporter,
      () => undefined,
      new Map([
        ['id', 'INTEGER'],
        ['iv', ivInLake],
        ['updated_at', 'TIMESTAMP WITH TIME ZONE'],
      ]),
    );

  it('is read whole once, and typed', async () => {
    const old = await plan('VARCHAR');
    expect(old.incremental).toBe(false);
    expect(old.where).toBe('');
    expect(old.plans.find((p) => p.name === 'iv')?.lakeType).toBe('INTERVAL');
    // Typed already: the next read is incremental again.
    const typed = await plan('INTERVAL');
    expect(typed.incremental).toBe(true);
    expect(typed.where).toContain('updated_at');
  });
});

describe('changes merged into a table whose intervals the lake holds as text (a cdc apply)', () => {
  it('stay text there, and are INTERVAL where the table has them typed or is new', () => {
    for (const type of ['interval', 'interval day to second(3)']) {
      expect(planMergedColumn('iv', type, 'VARCHAR').lakeType).toBe('VARCHAR');
      expect(planMergedColumn('iv', type, 'INTERVAL').lakeType).toBe('INTERVAL');
      expect(planMergedColumn('iv', type, undefined).lakeType).toBe('INTERVAL');
    }
    // Only intervals fall back: an integer is planned as an integer whatever the lake holds.
    expect(planMergedColumn('n', 'integer', 'VARCHAR').lakeType).toBe('INTEGER');
  });
});
