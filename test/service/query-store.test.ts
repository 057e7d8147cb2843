import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JobStore } from '../../src/service/jobs/job-store.js';
import { QueryStore, type QueryPlan } from '../../src/service/queries/store.js';
import { applyMigrations } from '../../src/service/store/migrate.js';
import { MIGRATIONS } from '../../src/service/store/migrations.js';
import type { MetadataDb } from '../../src/service/store/metadata-db.js';
import { PostgresMetadataDb } from '../../src/service/store/postgres-db.js';
import { SqliteMetadataDb } from '../../src/service/store/sqlite-db.js';
import { manualClock } from '../helpers/clock.js';
import { createMetadataDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

const opened: MetadataDb[] = [];
const dropped: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const db of opened.splice(0)) await db.close();
  for (const drop of dropped) await drop();
});

const KINDS: { name: string; open(): Promise<MetadataDb> }[] = [
  { name: 'sqlite', open: async () => SqliteMetadataDb.open(join(tempDir('lake-query-store'), 'm.sqlite')) },
  {
    name: 'postgres',
    async open() {
      const database = await createMetadataDatabase();
      dropped.push(database.drop);
      return PostgresMetadataDb.open(database.url);
    },
  },
];

describe.each(KINDS)('query records ($name)', (kind) => {
  // insert() answers without reading the record back: what it answers must be what the store then holds.
  it('a recorded query is exactly what reading it back gives, running or queued, with or without its extras', async () => {
    const db = await kind.open();
    opened.push(db);
    await applyMigrations(db, MIGRATIONS);
    await db.run('INSERT INTO organizations (id, name, table_permissions, created) VALUES (?, ?, 0, 0)', [
      'org_q',
      'q',
    ]);
    const clock = manualClock();
    const store = new QueryStore(db, new JobStore(db, clock));
    const plain: QueryPlan = { catalogFile: 'catalogs/v3.duckdb', readableDirs: ['lake/org_q'], catalogVersion: 3 };
    const asked: QueryPlan = {
      ...plain,
      schema: "it's",
      parameters: [{ name: 'n', value: 'back\\slash', type: 'STRING' }],
      timeoutSeconds: 5,
      rowLimit: 10,
      byteLimit: 1000,
      dryRun: true,
      statement: 'select ?',
    };
    const cases = [
      { id: 'qr_running', status: 'running' as const, plan: plain, tags: undefined },
      { id: 'qr_queued', status: 'queued' as const, plan: asked, tags: ['team:a', "o'dd"] },
    ];
    for (const c of cases) {
      const recorded = await db.transaction([], () =>
        store.insert({
          id: c.id,
          organizationId: 'org_q',
          principalId: 'usr_q',
          credentialId: 'crd_q',
          sql: 'select \'x\' as "y"',
          lease: { owner: 'wrk_q', expiresMs: clock.now() + 60_000 },
          status: c.status,
          plan: c.plan,
          ...(c.tags ? { tags: c.tags } : {}),
        }),
      );
      expect(recorded.status).toBe(c.status);
      expect(await store.get('org_q', c.id)).toEqual(recorded);
    }
  });
});
