import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HistoryStore } from '../../src/service/jobs/history-store.js';
import { jobSettingsFromEnv } from '../../src/service/jobs/settings.js';
import { SyncStore } from '../../src/service/syncs/sync-store.js';
import { jsonClient, syncSucceeded, type Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

const DAY = 86_400;

/**
 * The record of past work does not grow for good: finished syncs (with their events) and sources' log entries past
 * LAKE_HISTORY_RETENTION_DAYS are removed, except each source's newest sync, which its object shows.
 */
describe('history retention', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await inMemory.start();
  });
  afterAll(async () => {
    await api.close();
  });

  it('is 90 days unless set; 0 keeps everything; anything else is refused', () => {
    expect(jobSettingsFromEnv({}).historyRetentionSeconds).toBe(90 * DAY);
    expect(jobSettingsFromEnv({ LAKE_HISTORY_RETENTION_DAYS: '0' }).historyRetentionSeconds).toBe(0);
    for (const bad of ['-1', '1.5', 'ninety', '99999'])
      expect(() => jobSettingsFromEnv({ LAKE_HISTORY_RETENTION_DAYS: bad })).toThrow(/LAKE_HISTORY_RETENTION_DAYS/);
  });

  it('removes old finished syncs with their events and old log entries, keeping each source’s newest sync', async () => {
    const call = jsonClient(api);
    const org = api.home.organization.id;
    const one = await call('POST', '/sources', { connector: 'sample', name: 'kept one' });
    const two = await call('POST', '/sources', { connector: 'sample', name: 'kept two' });
    const syncsOfOne = [];
    for (let i = 0; i < 3; i++) syncsOfOne.push((await syncSucceeded(api, one.id as string)).id as string);
    const onlyOfTwo = (await syncSucceeded(api, two.id as string)).id as string;
    const logs = new SyncStore(api.home.db);
    await logs.log(org, one.id as string, 'error', 'public.t', 'old failure', {});
    await logs.log(org, one.id as string, 'error', 'public.t', 'new failure', {});
    // All but the newest of source one's syncs, source two's only sync, and the first log entry are 100 days old.
    const now = Math.floor(Date.now() / 1000);
    const aged = [syncsOfOne[0], syncsOfOne[1], onlyOfTwo] as string[];
    await api.home.db.run(
      `UPDATE jobs SET created = created - ${100 * DAY} WHERE id IN (${aged.map(() => '?').join(', ')})`,
      aged,
    );
    await api.home.db.run(`UPDATE source_logs SET created = created - ${100 * DAY} WHERE message = 'old failure'`);
    const eventsOf = async (id: string): Promise<number> =>
      Number((await api.home.db.get<{ n: number }>('SELECT count(*) AS n FROM job_events WHERE job_id = ?', [id]))?.n);
    expect(await eventsOf(syncsOfOne[0] as string)).toBeGreaterThan(0);

    const history = new HistoryStore(api.home.db);
    expect(await history.purgeJobsBefore(now - 90 * DAY)).toBe(2);
    await history.purgeLogsBefore(now - 90 * DAY);

    const status = async (id: string): Promise<number> => (await api.request(`/jobs/${id}`)).status;
    expect(await status(syncsOfOne[0] as string)).toBe(404);
    expect(await status(syncsOfOne[1] as string)).toBe(404);
    expect(await eventsOf(syncsOfOne[0] as string)).toBe(0);
    // The newest sync of each source stays, however old: the source shows it.
    expect(await status(syncsOfOne[2] as string)).toBe(200);
    expect(await status(onlyOfTwo)).toBe(200);
    const sourceTwo = await call('GET', `/sources/${two.id as string}`);
    expect((sourceTwo.latest_sync as Json | null)?.id).toBe(onlyOfTwo);
    const entries = (await call('GET', '/logs')).data as Json[];
    expect(entries.map((e) => e.message)).toEqual(['new failure']);
    // Nothing more to remove the second time.
    expect(await history.purgeJobsBefore(now - 90 * DAY)).toBe(0);
  });
});
