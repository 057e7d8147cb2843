import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REAL_CLOCK, type Clock } from '../../src/service/core/clock.js';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { expectError, run, type Json, jobWhen } from '../helpers/queries.js';

const db = useTestDatabase();

// A fixed day: 2026-11-10, so the month is 30 days and 10 have elapsed.
const clock: Clock = { now: () => Date.parse('2026-11-10T12:00:00Z'), sleep: REAL_CLOCK.sleep };

describe.each(TRANSPORTS)('logs and usage over $name', (transport) => {
  let api: Harness;
  beforeAll(async () => {
    api = await transport.start({ services: { clock, jobSettings: { leaseMs: 10 * 365 * 86_400_000 } } });
  });
  afterAll(async () => {
    await api.close();
  });
  const send = (method: string, path: string, body?: object) =>
    api.request(path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    });
  const syncAndWait = async (sourceId: string): Promise<Json> => {
    const sync = (await (await send('POST', `/sources/${sourceId}/sync`, {})).json()) as Json;
    return jobWhen(async (path) => (await (await send('GET', path)).json()) as Json, sync.id as string);
  };

  it('usage matches the work done: queries run, result bytes, rows synced, storage, and a projected cost', async () => {
    const before = (await (await send('GET', '/usage')).json()) as Json;
    expect(before.totals).toEqual({ queries_run: 0, result_bytes: 0, rows_synced: 0, rows_sent: 0 });
    const results: Json[] = [];
    for (const sql of ['select 1 as x', 'select * from lake.demo.orders', "select 'x'::int"])
      results.push(await run(api, sql));
    let bytes = 0;
    for (const r of results.filter((r) => r.status === 'succeeded'))
      bytes += (await api.services.queries.store.getById(r.id))?.resultBytes ?? 0;
    const source = (await (
      await send('POST', '/sources', { connector: 'sample', name: `Usage ${transport.name}` })
    ).json()) as Json;
    expect(await syncAndWait(source.id)).toMatchObject({ status: 'succeeded' });

    const usage = (await (await send('GET', '/usage')).json()) as Json;
    expect(usage).toMatchObject({ object: 'usage', month: '2026-11', currency: 'USD' });
    expect(usage.totals).toEqual({ queries_run: 3, result_bytes: bytes, rows_synced: 1900, rows_sent: 0 });
    expect(usage.days).toEqual([expect.objectContaining({ date: '2026-11-10', queries_run: 3, rows_synced: 1900 })]);
    const tables = await api.services.lake.tables.list(api.home.organization.id);
    expect(usage.storage_bytes).toBe(tables.reduce((sum, t) => sum + t.snapshot.bytes, 0));
    const p = usage.prices;
    const metered =
      3 * p.queries_run + (bytes / 1024 ** 3) * p.result_bytes_per_gb + (1900 / 1e6) * p.rows_synced_per_million;
    const storage = (usage.storage_bytes / 1024 ** 3) * p.storage_per_gb_month;
    expect(usage.cost.days_elapsed).toBe(10);
    expect(usage.cost.days_in_month).toBe(30);
    expect(usage.cost.month_to_date).toBeCloseTo(metered + storage, 6);
    expect(usage.cost.projected).toBeCloseTo((metered * 30) / 10 + storage, 6);
    expect(((await (await send('GET', '/usage?month=2026-10')).json()) as Json).totals.queries_run).toBe(0);
    await expectError(await send('GET', '/usage?month=nov'), 400, 'parameter_invalid', 'month');
  });

  it('logs list schema changes and errors from syncs, filtered by source, kind and since, in pages', async () => {
    const table = `logged_${transport.name.replace(/\W/g, '')}`;
    await adminQuery(
      `CREATE TABLE public.${table} (id int PRIMARY KEY, v text); INSERT INTO public.${table} VALUES (1, 'a'); GRANT SELECT ON public.${table} TO ${db.reader}`,
      db.database,
    );
    const source = (await (
      await send('POST', '/sources', {
        connector: 'postgres',
        name: `Logged ${transport.name}`,
        config: { port: db.port, database: db.database },
        host: db.host,
        user: db.reader,
      })
    ).json()) as Json;
    await send('PATCH', `/sources/${source.id}`, {
      tables: source.tables.map((t: Json) => ({ schema: 'public', name: t.name, enabled: t.name === table })),
    });
    expect(await syncAndWait(source.id)).toMatchObject({ status: 'succeeded' });
    await adminQuery(`ALTER TABLE public.${table} ADD COLUMN w int`, db.database);
    expect(await syncAndWait(source.id)).toMatchObject({ status: 'succeeded' });
    await adminQuery(`REVOKE SELECT ON public.${table} FROM ${db.reader}`, db.database);
    expect(await syncAndWait(source.id)).toMatchObject({ status: 'failed', error: { code: 'tables_failed' } });

    const all = (await (await send('GET', `/logs?source=${source.id}`)).json()) as Json;
    expect(all.data.map((e: Json) => e.kind)).toEqual(['error', 'schema_change']);
    expect(all.data[1]).toMatchObject({
      object: 'log_entry',
      source: source.id,
      table: `public.${table}`,
      message: expect.stringContaining('+w'),
      details: { added: ['w'], dropped: [], retyped: [] },
    });
    expect(all.data[0].message).toMatch(/permission denied/);
    expect(
      ((await (await send('GET', `/logs?source=${source.id}&kind=schema_change`)).json()) as Json).data,
    ).toHaveLength(1);
    expect(
      (
        (await (
          await send('GET', `/logs?source=${source.id}&since=${Math.floor(clock.now() / 1000) + 60}`)
        ).json()) as Json
      ).data,
    ).toHaveLength(0);
    const page = (await (await send('GET', `/logs?source=${source.id}&limit=1`)).json()) as Json;
    expect(page).toMatchObject({ has_more: true, next_cursor: page.data[0].id });
    const next = (await (
      await send('GET', `/logs?source=${source.id}&limit=1&starting_after=${page.next_cursor}`)
    ).json()) as Json;
    expect(next.data[0].kind).toBe('schema_change');
    await expectError(await send('GET', '/logs?kind=nope'), 400, 'parameter_invalid', 'kind');
    await expectError(await send('GET', '/logs?starting_after=log_nope'), 400, 'invalid_cursor', 'starting_after');
    // A deleted source's entries go with it.
    expect((await send('DELETE', `/sources/${source.id}`)).status).toBe(200);
    expect(((await (await send('GET', `/logs?source=${source.id}`)).json()) as Json).data).toHaveLength(0);
  });
});
