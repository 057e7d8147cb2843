import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DUE_PER_ORGANIZATION, DUE_PER_ROUND } from '../../src/service/core/schedule-rounds.js';
import { SendStore, type SendRecord } from '../../src/service/sends/send-store.js';
import { SourceStore } from '../../src/service/sources/source-store.js';
import { applyMigrations } from '../../src/service/store/migrate.js';
import { MIGRATIONS } from '../../src/service/store/migrations.js';
import type { MetadataDb } from '../../src/service/store/metadata-db.js';
import { PostgresMetadataDb } from '../../src/service/store/postgres-db.js';
import { SqliteMetadataDb } from '../../src/service/store/sqlite-db.js';
import { createMetadataDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

const opened: MetadataDb[] = [];
const dropped: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const db of opened.splice(0)) await db.close();
  for (const drop of dropped) await drop();
});

const STORES: { name: string; open(): Promise<MetadataDb> }[] = [
  {
    name: 'sqlite',
    async open() {
      const db = SqliteMetadataDb.open(join(tempDir('lake-schedule-fairness'), 'm.sqlite'));
      opened.push(db);
      await applyMigrations(db, MIGRATIONS);
      return db;
    },
  },
  {
    name: 'postgres',
    async open() {
      const database = await createMetadataDatabase();
      dropped.push(database.drop);
      const db = PostgresMetadataDb.open(database.url);
      opened.push(db);
      await applyMigrations(db, MIGRATIONS);
      return db;
    },
  },
];

const NOW = 1_800_000_000;

/**
 * A round of the scheduler took the due sources oldest first, 100 of them, and the due sends all at once: an
 * organization with thousands of schedules due together filled every round, and another organization's schedule,
 * due a second later, waited until all of them had started (sends: a round of every due send, however many). Each
 * round now takes each organization's oldest few.
 */
describe.each(STORES)('due schedules on $name', ({ open }) => {
  it("one organization's many due sources and sends leave room in every round for another's", async () => {
    const db = await open();
    for (const org of ['org_busy', 'org_quiet'])
      await db.run('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)', [org, org, NOW]);
    const sources = new SourceStore(db);
    const sends = new SendStore(db);
    const addSource = (org: string, n: number, nextSync: number) =>
      sources.insert({
        id: `src_${org}_${String(n).padStart(3, '0')}`,
        organizationId: org,
        name: `${org} ${n}`,
        connector: 'sample',
        config: {},
        sealedSecrets: null,
        secretsSet: [],
        tables: [],
        discovered: null,
        lakeSchema: `${org}_${n}`,
        schedule: { schedule: { interval: '1m' }, nextSync, principalId: 'usr_1', credentialId: 'tok_1' },
      });
    const addSend = (org: string, n: number, nextRun: number) =>
      sends.insert({
        id: `snd_${org}_${String(n).padStart(3, '0')}`,
        organizationId: org,
        name: `${org} ${n}`,
        sql: 'select 1',
        destination: { type: 'webhook', url: 'https://example.com/hook', format: 'json', batch_size: 100 },
        secrets: '',
        secretsSet: [],
        everyMinutes: 1,
        paused: false,
        credentialId: 'tok_1',
        principalId: 'usr_1',
        nextRun,
        created: NOW,
        updated: NOW,
      } satisfies SendRecord);
    // The busy organization's 150 came due first; the quiet one's a second after.
    for (let n = 0; n < 150; n++) {
      await addSource('org_busy', n, NOW - 60);
      await addSend('org_busy', n, NOW - 60);
    }
    await addSource('org_quiet', 0, NOW - 59);
    await addSend('org_quiet', 0, NOW - 59);

    const dueSources = await sources.due(NOW);
    expect(dueSources.filter((s) => s.organizationId === 'org_busy')).toHaveLength(DUE_PER_ORGANIZATION);
    expect(dueSources.filter((s) => s.organizationId === 'org_quiet').map((s) => s.id)).toEqual(['src_org_quiet_000']);
    const dueSends = await sends.due(NOW);
    expect(dueSends.filter((s) => s.organizationId === 'org_busy')).toHaveLength(DUE_PER_ORGANIZATION);
    expect(dueSends.filter((s) => s.organizationId === 'org_quiet').map((s) => s.id)).toEqual(['snd_org_quiet_000']);
    // Oldest first within an organization, and the rest come in later rounds as these are claimed.
    expect(dueSources[0]?.id).toBe('src_org_busy_000');
    for (const source of dueSources) await sources.claimTick(source.id, source.schedule?.nextSync as number, NOW + 60);
    expect((await sources.due(NOW)).map((s) => s.id)).toEqual(
      Array.from(
        { length: DUE_PER_ORGANIZATION },
        (_, i) => `src_org_busy_${String(i + DUE_PER_ORGANIZATION).padStart(3, '0')}`,
      ),
    );

    // Many organizations: a round stays a round.
    for (let o = 0; o < 15; o++) {
      const org = `org_many_${o}`;
      await db.run('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)', [org, org, NOW]);
      for (let n = 0; n < 10; n++) await addSend(org, n, NOW - 30);
    }
    expect((await sends.due(NOW)).length).toBe(DUE_PER_ROUND);
  }, 60_000);
});
