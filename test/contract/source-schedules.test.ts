import pg from 'pg';
import { LOCAL_ADMIN } from '../../src/service/auth/audit-log.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../helpers/clock.js';
import { ADMIN_URL, useTestDatabase } from '../helpers/postgres.js';
import { expectError, jobWhen, jsonClient, type Json } from '../helpers/queries.js';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait-for.js';
import { TEST_STORE } from '../helpers/test-store.js';
import { join } from 'node:path';

const db = useTestDatabase();

describe.each(TRANSPORTS)('source schedules over $name', (transport) => {
  // 2026-11-10 12:00 UTC: a Tuesday, in Berlin's winter time (UTC+1).
  const clock = manualClock(Date.parse('2026-11-10T12:00:00Z'));
  const homeDir = join(tempDir('lake-home'), 'home');
  let api: Harness;
  /**
   * A second service over the same home and PostgreSQL store: another replica's scheduler. SQLite serves one
   * process, so there the second scheduler is the same service's, racing itself.
   */
  let replica: Harness;
  beforeAll(async () => {
    api = await transport.start({ homeDir, services: { clock } });
    replica = TEST_STORE === 'postgres' ? await transport.start({ homeDir, services: { clock } }) : api;
  });
  afterAll(async () => {
    if (replica !== api) await replica.close();
    await api.close();
  });
  const send = (method: string, path: string, body?: object) =>
    api.request(path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    });
  const json = (method: string, path: string, body?: object): Promise<Json> => jsonClient(api)(method, path, body);
  const nowSeconds = (): number => Math.floor(clock.now() / 1000);
  let count = 0;
  const sampleSource = (schedule?: object | null): Promise<Json> =>
    json('POST', '/sources', { connector: 'sample', name: `Scheduled ${++count}`, schedule });

  it('a source takes an interval or a cron expression with a time zone, and shows its next sync', async () => {
    const every = await sampleSource({ interval: '15m' });
    expect(every.schedule).toEqual({ interval: '15m', cron: null, time_zone: null });
    expect(every.next_sync_at).toBe(nowSeconds() + 900);
    // 06:00 in Berlin is 05:00 UTC in November; the next one after Tuesday noon is Wednesday's.
    const cron = await sampleSource({ cron: '0 6 * * *', time_zone: 'Europe/Berlin' });
    expect(cron.schedule).toEqual({ interval: null, cron: '0 6 * * *', time_zone: 'Europe/Berlin' });
    expect(cron.next_sync_at).toBe(Date.parse('2026-11-11T05:00:00Z') / 1000);
    const utc = await sampleSource({ cron: '30 2 * * 1' });
    expect(utc.schedule.time_zone).toBe('UTC');
    expect(utc.next_sync_at).toBe(Date.parse('2026-11-16T02:30:00Z') / 1000);
    const none = await sampleSource();
    expect(none).toMatchObject({ schedule: null, next_sync_at: null });
    // Lists carry the schedule too.
    const listed = (await json('GET', '/sources?limit=100')).data.find((s: Json) => s.id === every.id);
    expect(listed).toMatchObject({ schedule: { interval: '15m' }, next_sync_at: nowSeconds() + 900 });
  });

  it('a schedule that cannot be read is refused, naming the field, and nothing is created', async () => {
    const cases: [object, string][] = [
      [{ interval: '30s' }, 'schedule.interval'],
      [{ interval: '0m' }, 'schedule.interval'],
      [{ interval: '40d' }, 'schedule.interval'],
      [{ interval: 'often' }, 'schedule.interval'],
      [{ interval: '15m', time_zone: 'UTC' }, 'schedule.time_zone'],
      [{}, 'schedule.interval'],
      [{ interval: '15m', cron: '* * * * *' }, 'schedule.cron'],
      [{ cron: '61 * * * *' }, 'schedule.cron'],
      [{ cron: '* * * * * *' }, 'schedule.cron'],
      [{ cron: '0 0 31 2 *' }, 'schedule.cron'],
      [{ cron: '0 6 * * *', time_zone: 'Mars/Olympus' }, 'schedule.time_zone'],
    ];
    const before = (await json('GET', '/sources?limit=100')).data.length;
    for (const [schedule, param] of cases) {
      const body = await expectError(
        await send('POST', '/sources', { connector: 'sample', name: 'Refused', schedule }),
        400,
        'invalid_source_parameters',
        param,
      );
      expect(body.message).not.toMatch(/at |\n/);
    }
    expect((await json('GET', '/sources?limit=100')).data).toHaveLength(before);
    const source = await sampleSource();
    await expectError(
      await send('PATCH', `/sources/${source.id}`, { schedule: { interval: '5s' } }),
      400,
      'invalid_source_parameters',
      'schedule.interval',
    );
    await expectError(
      await send('PATCH', `/sources/${source.id}`, { schedule: 'hourly' }),
      400,
      'invalid_source_parameters',
      'schedule',
    );
    expect((await json('GET', `/sources/${source.id}`)).schedule).toBeNull();
  });

  it('PATCH sets, replaces and clears a schedule; a paused source shows no next sync and resumes from now', async () => {
    const source = await sampleSource();
    const set = await json('PATCH', `/sources/${source.id}`, { schedule: { interval: '1h' } });
    expect(set).toMatchObject({ schedule: { interval: '1h' }, next_sync_at: nowSeconds() + 3600 });
    const paused = await json('PATCH', `/sources/${source.id}`, { paused: true });
    expect(paused).toMatchObject({ schedule: { interval: '1h' }, next_sync_at: null });
    clock.advance(5 * 3600_000);
    const resumed = await json('PATCH', `/sources/${source.id}`, { paused: false });
    expect(resumed.next_sync_at).toBe(nowSeconds() + 3600);
    const cleared = await json('PATCH', `/sources/${source.id}`, { schedule: null });
    expect(cleared).toMatchObject({ schedule: null, next_sync_at: null });
  });

  it('a due schedule starts one sync across two replicas, as its setter, then comes due again an interval on', async () => {
    const source = await sampleSource({ interval: '15m' });
    const due = source.next_sync_at as number;
    // Not due yet: nothing starts (other tests' sources may be due by now).
    expect(await sourcesOf(await api.services.syncs.runDueSchedules())).not.toContain(source.id);
    clock.advance(15 * 60_000);
    const started = (
      await Promise.all([api.services.syncs.runDueSchedules(), replica.services.syncs.runDueSchedules()])
    ).flat();
    const syncs = await json('GET', `/sources/${source.id}`);
    expect(syncs.latest_sync).toMatchObject({ trigger: 'schedule' });
    expect(started).toContain(syncs.latest_sync.id);
    expect(started.filter((id) => id === syncs.latest_sync.id)).toHaveLength(1);
    const job = await jobWhen(async (path) => json('GET', path), syncs.latest_sync.id);
    expect(job).toMatchObject({ kind: 'sync', status: 'succeeded' });
    // The job is the owner's, who set the schedule: it is in their job list like any sync they started.
    expect((await json('GET', '/jobs?kind=sync&limit=100')).data.map((j: Json) => j.id)).toContain(job.id);
    expect((await json('GET', `/sources/${source.id}`)).next_sync_at).toBe(due + 900);
    // A manual sync is still one at once, and says so.
    const manual = await json('POST', `/sources/${source.id}/sync`, {});
    expect(manual.trigger).toBe('manual');
    await jobWhen(async (path) => json('GET', path), manual.id);
    // A server down for hours runs the schedule once when back, not once per tick it missed.
    clock.advance(5 * 3600_000);
    const afterGap = (
      await Promise.all([replica.services.syncs.runDueSchedules(), api.services.syncs.runDueSchedules()])
    ).flat();
    const latest = (await json('GET', `/sources/${source.id}`)).latest_sync;
    expect(afterGap.filter((id) => id === latest.id)).toHaveLength(1);
    await jobWhen(async (path) => json('GET', path), latest.id);
    const next = (await json('GET', `/sources/${source.id}`)).next_sync_at as number;
    expect(next).toBeGreaterThan(nowSeconds());
    expect(next - nowSeconds()).toBeLessThanOrEqual(900);
    expect((next - due) % 900).toBe(0);
  });

  it('a tick that comes while the last sync still runs is skipped; paused and deleted sources never start', async () => {
    // A PostgreSQL source whose table is locked: its sync waits on the lock, so it stays running.
    const source = await json('POST', '/sources', {
      connector: 'postgres',
      name: `Locked ${++count}`,
      config: { port: db.port, database: db.database },
      host: db.host,
      user: db.reader,
      schedule: { interval: '1m' },
    });
    const locker = new pg.Client({ connectionString: new URL(`/${db.database}`, ADMIN_URL).toString() });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE public.orders IN ACCESS EXCLUSIVE MODE');
      // The tick comes due first and the sync starts after, so its lease (from the test's clock) is fresh.
      clock.advance(60_000);
      const running = await json('POST', `/sources/${source.id}/sync`, {});
      await waitFor(
        async () => (await json('GET', `/jobs/${running.id}`)).status,
        (status) => status === 'running',
      );
      expect(await sourcesOf(await api.services.syncs.runDueSchedules())).not.toContain(source.id);
      expect((await json('GET', `/sources/${source.id}`)).latest_sync.id).toBe(running.id);
      // The tick was used up: the next one is a minute on, not at once when the sync ends.
      expect((await json('GET', `/sources/${source.id}`)).next_sync_at).toBe(nowSeconds() + 60);
      await locker.query('ROLLBACK');
      expect(await jobWhen(async (path) => json('GET', path), running.id)).toMatchObject({ status: 'succeeded' });
    } finally {
      await locker.end();
    }
    await json('PATCH', `/sources/${source.id}`, { paused: true });
    clock.advance(120_000);
    expect(await sourcesOf(await api.services.syncs.runDueSchedules())).not.toContain(source.id);
    const deleted = await sampleSource({ interval: '1m' });
    await json('DELETE', `/sources/${deleted.id}`);
    clock.advance(120_000);
    expect(await sourcesOf(await api.services.syncs.runDueSchedules())).not.toContain(deleted.id);
  });

  it("a deactivated organization's schedules wait; reactivated, the schedule runs once", async () => {
    const source = await sampleSource({ interval: '1m' });
    const organization = api.home.organization.id;
    await api.services.organizations.setDeactivated(LOCAL_ADMIN, organization, true);
    try {
      clock.advance(120_000);
      expect(await sourcesOf(await api.services.syncs.runDueSchedules())).not.toContain(source.id);
    } finally {
      await api.services.organizations.setDeactivated(LOCAL_ADMIN, organization, false);
    }
    const started = await sourcesOf(await api.services.syncs.runDueSchedules());
    expect(started.filter((id) => id === source.id)).toHaveLength(1);
    await jobWhen(async (path) => json('GET', path), (await json('GET', `/sources/${source.id}`)).latest_sync.id);
  });

  /** The sources the syncs were of (other tests' schedules come due as the clock moves too). */
  const sourcesOf = async (syncIds: readonly string[]): Promise<string[]> =>
    Promise.all(syncIds.map(async (id) => (await api.services.syncs.store.get(id))?.sourceId ?? '?'));
});
