import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { expectError, run, type Json, jobWhen } from '../helpers/queries.js';
import { readSse } from '../helpers/sse.js';

const db = useTestDatabase();

describe.each(TRANSPORTS)('syncs over $name', (transport) => {
  let api: Harness;
  beforeAll(async () => {
    api = await transport.start();
  });
  afterAll(async () => {
    await api.close();
  });
  const send = (method: string, path: string, body?: object, headers: Record<string, string> = {}, token?: string) =>
    api.request(path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      token,
    });
  const createSource = async (body: object): Promise<Json> =>
    (await (await send('POST', '/sources', body)).json()) as Json;
  const finish = (id: string): Promise<Json> =>
    jobWhen(async (path) => (await (await send('GET', path)).json()) as Json, id);

  it('POST /sources/{id}/sync answers 202 with a sync object that is also a job', async () => {
    const source = await createSource({ connector: 'sample', name: 'Sample One' });
    const response = await send('POST', `/sources/${source.id}/sync`, {});
    expect(response.status).toBe(202);
    const sync = (await response.json()) as Json;
    expect(sync).toMatchObject({
      object: 'sync',
      id: expect.stringMatching(/^sync_/),
      source: source.id,
      status: expect.stringMatching(/queued|running|succeeded/),
      job: `/jobs/${sync.id}`,
    });
    expect(response.headers.get('location')).toBe(`/jobs/${sync.id}`);
    expect(await finish(sync.id)).toMatchObject({ kind: 'sync', status: 'succeeded' });
    const after = (await (await send('GET', `/sources/${source.id}`)).json()) as Json;
    expect(after.latest_sync).toMatchObject({ id: sync.id, status: 'succeeded', rows: 1900 });
    expect(after.latest_sync.tables.map((t: Json) => `${t.lake_table} ${t.phase} ${t.completed}/${t.total}`)).toEqual([
      'lake.sample_one.accounts committed 100/100',
      'lake.sample_one.invoices committed 1000/1000',
      'lake.sample_one.payments committed 800/800',
    ]);
    expect(
      (
        await run(
          api,
          'select count(*) as n from lake.sample_one.payments p join lake.sample_one.invoices using (invoice_id)',
        )
      ).data,
    ).toEqual([{ n: 800 }]);
  });

  it('refuses a paused source (409 source_paused) and a deleted one (404), and checks the body', async () => {
    const source = await createSource({ connector: 'sample', name: 'Paused' });
    await send('PATCH', `/sources/${source.id}`, { paused: true });
    await expectError(await send('POST', `/sources/${source.id}/sync`, {}), 409, 'source_paused');
    await send('PATCH', `/sources/${source.id}`, { paused: false });
    await expectError(
      await send('POST', `/sources/${source.id}/sync`, { tables: ['billing.nope'] }),
      400,
      'parameter_invalid',
      'tables[0]',
    );
    // A bare table name is told which schema.table it may mean, and the message names what was sent.
    const bare = await expectError(
      await send('POST', `/sources/${source.id}/sync`, { tables: ['accounts'] }),
      400,
      'parameter_invalid',
      'tables[0]',
    );
    expect(bare.message).toContain("'accounts'");
    expect(bare.message).toMatch(/Did you mean \w+\.accounts\?/);
    await expectError(
      await send('POST', `/sources/${source.id}/sync`, { full_refresh: 'yes' }),
      400,
      'parameter_invalid',
      'full_refresh',
    );
    await expectError(
      await send('POST', `/sources/${source.id}/sync`, { surprise: 1 }),
      400,
      'parameter_invalid',
      'surprise',
    );
    await send('DELETE', `/sources/${source.id}`);
    await expectError(await send('POST', `/sources/${source.id}/sync`, {}), 404, 'source_not_found');
  });

  it('concurrent requests produce one run; the others get 409 sync_in_progress naming it', async () => {
    const source = await createSource({ connector: 'sample', name: 'Busy', config: { scale: 20 } });
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => send('POST', `/sources/${source.id}/sync`, {})),
    );
    const accepted = responses.filter((r) => r.status === 202);
    expect(accepted).toHaveLength(1);
    const sync = (await accepted[0]?.json()) as Json;
    for (const refused of responses.filter((r) => r.status !== 202)) {
      const error = await expectError(refused, 409, 'sync_in_progress');
      expect(error.message).toContain(sync.id);
    }
    await finish(sync.id);
    const runs = await api.home.db.get<{ n: number }>('SELECT count(*) AS n FROM syncs WHERE source_id = ?', [
      source.id,
    ]);
    expect(runs?.n).toBe(1);
  });

  it('an Idempotency-Key replays the same sync', async () => {
    const source = await createSource({ connector: 'sample', name: 'Keyed' });
    const first = (await (
      await send('POST', `/sources/${source.id}/sync`, {}, { 'Idempotency-Key': 'sync-key-1' })
    ).json()) as Json;
    await finish(first.id);
    const again = await send('POST', `/sources/${source.id}/sync`, {}, { 'Idempotency-Key': 'sync-key-1' });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(((await again.json()) as Json).id).toBe(first.id);
    await expectError(
      await send('POST', `/sources/${source.id}/sync`, { full_refresh: true }, { 'Idempotency-Key': 'sync-key-1' }),
      409,
      'idempotency_key_reused',
    );
  });

  it('incremental tables merge changed rows on the primary key: one row per key; schema changes are logged', async () => {
    const name = `inc_${transport.name.replace(/\W/g, '')}`;
    await adminQuery(
      `CREATE TABLE public.${name} (id int PRIMARY KEY, v text, changed timestamptz NOT NULL); INSERT INTO public.${name} SELECT g, 'v' || g, '2024-01-01'::timestamptz + g * interval '1 minute' FROM generate_series(1, 10) g; GRANT SELECT ON public.${name} TO ${db.reader}`,
      db.database,
    );
    const source = await createSource({
      connector: 'postgres',
      name: `Inc ${transport.name}`,
      config: { port: db.port, database: db.database },
      host: db.host,
      user: db.reader,
    });
    const tables = source.tables.map((t: Json) =>
      t.name === name
        ? { schema: 'public', name, mode: 'incremental', cursor_column: 'changed' }
        : { schema: 'public', name: t.name, enabled: false },
    );
    expect((await send('PATCH', `/sources/${source.id}`, { tables })).status).toBe(200);
    const first = (await (await send('POST', `/sources/${source.id}/sync`, {})).json()) as Json;
    expect(await finish(first.id)).toMatchObject({ status: 'succeeded' });
    const schema = ((await (await send('GET', `/sources/${source.id}`)).json()) as Json).latest_sync.tables[0]
      .lake_table as string;

    await adminQuery(
      `UPDATE public.${name} SET v = 'changed', changed = '2025-01-01' WHERE id IN (2, 3); INSERT INTO public.${name} VALUES (11, 'new', '2025-01-02')`,
      db.database,
    );
    const second = (await (await send('POST', `/sources/${source.id}/sync`, {})).json()) as Json;
    expect(await finish(second.id)).toMatchObject({ status: 'succeeded' });
    const rows = await run(api, `select id, v, count(*) over (partition by id) as copies from ${schema} order by id`);
    expect(rows.data).toHaveLength(11);
    expect(rows.data.every((r: Json) => r.copies === 1)).toBe(true);
    expect(rows.data.filter((r: Json) => r.v === 'changed').map((r: Json) => r.id)).toEqual([2, 3]);
    expect(rows.data[10]).toMatchObject({ id: 11, v: 'new' });
    // The next sync reads from the newest change on.
    const state = await api.home.db.get<{ cursor_value: string }>(
      'SELECT cursor_value FROM source_table_state WHERE source_id = ? AND table_name = ?',
      [source.id, name],
    );
    expect(state?.cursor_value).toBe('2025-01-02 00:00:00+00');

    await adminQuery(`ALTER TABLE public.${name} ADD COLUMN extra int DEFAULT 7`, db.database);
    const third = (await (await send('POST', `/sources/${source.id}/sync`, {})).json()) as Json;
    expect(await finish(third.id)).toMatchObject({ status: 'succeeded' });
    expect((await run(api, `select count(*) as n, min(extra) as e from ${schema}`)).data).toEqual([{ n: 11, e: 7 }]);
    const logs = await api.home.db.all<Json>(
      "SELECT kind, table_name, message FROM source_logs WHERE source_id = ? AND kind = 'schema_change'",
      [source.id],
    );
    expect(logs).toEqual([
      expect.objectContaining({ table_name: `public.${name}`, message: expect.stringContaining('+extra') }),
    ]);
    // A change of many columns names the first twenty and counts the rest: a table may have thousands.
    await adminQuery(
      `ALTER TABLE public.${name} ${Array.from({ length: 30 }, (_, i) => `ADD COLUMN wide_${i} int`).join(', ')}`,
      db.database,
    );
    const fourth = (await (await send('POST', `/sources/${source.id}/sync`, {})).json()) as Json;
    expect(await finish(fourth.id)).toMatchObject({ status: 'succeeded' });
    const wide = await api.home.db.all<{ message: string }>(
      "SELECT message FROM source_logs WHERE source_id = ? AND kind = 'schema_change' AND message LIKE '%wide_0%'",
      [source.id],
    );
    expect(wide.map((l) => l.message)).toEqual([
      `Table public.${name} changed: ${Array.from({ length: 20 }, (_, i) => `+wide_${i}`).join(' ')} and 10 more columns; it was refreshed in full.`,
    ]);
  });

  it('the sync stream: progress per table, a final outcome, ids that resume with Last-Event-ID', async () => {
    const source = await createSource({ connector: 'sample', name: 'Streamed' });
    expect((await send('GET', `/sources/${source.id}/sync/stream`)).status).toBe(204);
    const sync = (await (await send('POST', `/sources/${source.id}/sync`, {})).json()) as Json;
    await finish(sync.id);
    const events = (await readSse(await send('GET', `/sources/${source.id}/sync/stream`))).filter(
      (i) => i.kind === 'event',
    );
    expect(events[0]).toMatchObject({ event: 'job.created', id: `${sync.id}:1` });
    expect(events.at(-1)).toMatchObject({ event: 'job.succeeded', data: { status: 'succeeded' } });
    const progress = events.filter((e) => e.event === 'sync.progress').map((e) => e.data as Json);
    expect(progress.map((p) => `${p.table}:${p.phase}`)).toContain('billing.invoices:committed');
    expect(progress.find((p) => p.phase === 'committed' && p.table === 'billing.invoices')).toMatchObject({
      completed: 1000,
      total: 1000,
      lake_table: 'lake.streamed.invoices',
    });
    const middle = events[3]?.id as string;
    const resumed = (
      await readSse(await send('GET', `/sources/${source.id}/sync/stream`, undefined, { 'Last-Event-ID': middle }))
    ).filter((i) => i.kind === 'event');
    expect(resumed.map((e) => e.id)).toEqual(events.slice(4).map((e) => e.id));
    await expectError(
      await send('GET', `/sources/${source.id}/sync/stream`, undefined, { 'Last-Event-ID': 'garbage' }),
      400,
      'invalid_last_event_id',
    );
    await expectError(
      await send('GET', `/sources/${source.id}/sync/stream`, undefined, { 'Last-Event-ID': `${sync.id}:999` }),
      400,
      'invalid_last_event_id',
    );
  });

  it('starting a sync needs apps:manage; reading the stream needs data:read', async () => {
    const source = await createSource({ connector: 'sample', name: 'Scoped' });
    const issue = async (scopes: string[]) =>
      (
        await api.home.credentials.issue({
          kind: 'pat',
          organizationId: api.home.organization.id,
          userId: api.home.owner.id,
          name: 's',
          scopes: scopes as never,
        })
      ).secret;
    await expectError(
      await send('POST', `/sources/${source.id}/sync`, {}, {}, await issue(['data:read'])),
      403,
      'missing_scope',
    );
    await expectError(
      await send('GET', `/sources/${source.id}/sync/stream`, undefined, {}, await issue(['apps:manage'])),
      403,
      'missing_scope',
    );
  });
});
