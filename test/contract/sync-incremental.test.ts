import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MERGES } from '../../src/service/storage/lake.js';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { run, syncSucceeded, type Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * Incremental syncs add the changed rows as files of their own, with DuckLake delete files for the rows they
 * replace, instead of rewriting the table, so they cost what changed; queries see exactly the merged rows, and a
 * table with MAX_MERGES merges on top of its full write is compacted.
 */
describe('incremental syncs in layers', () => {
  const db = useTestDatabase();
  let api: Harness;
  let sourceId: string;
  beforeAll(async () => {
    await adminQuery(
      `CREATE TABLE public.items (id int PRIMARY KEY, v text, changed timestamptz NOT NULL);
       INSERT INTO public.items SELECT g, 'v' || g, '2024-01-01'::timestamptz + g * interval '1 minute' FROM generate_series(1, 1000) g;
       GRANT SELECT ON public.items TO ${db.reader};`,
      db.database,
    );
    api = await inMemory.start({ services: { gcSettings: { retentionSeconds: 0, intervalMs: 600_000 } } });
    const source = (await (
      await api.request('/sources', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          connector: 'postgres',
          name: 'layers',
          config: { port: db.port, database: db.database },
          host: db.host,
          user: db.reader,
        }),
      })
    ).json()) as Json;
    sourceId = source.id as string;
    const tables = source.tables.map((t: Json) =>
      t.name === 'items'
        ? { schema: 'public', name: 'items', mode: 'incremental', cursor_column: 'changed' }
        : { schema: 'public', name: t.name, enabled: false },
    );
    await api.request(`/sources/${sourceId}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ tables }),
    });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
  });

  const sync = (): Promise<Json> => syncSucceeded(api, sourceId);
  const snapshot = async () =>
    (await api.services.lake.tables.get(api.home.organization.id, 'layers', 'items'))?.snapshot as NonNullable<
      Awaited<ReturnType<typeof api.services.lake.tables.get>>
    >['snapshot'];

  /** The lake's rows against the source's, with the catalog's row count. */
  async function expectSameRows(): Promise<void> {
    const source = (await adminQuery('SELECT id, v FROM public.items ORDER BY id', db.database)).rows;
    const lake = await run(api, 'select id, v from lake.layers.items order by id', '&format=inline&limit=1000');
    let rows = lake.data as Json[];
    for (let cursor = lake.next_cursor; cursor;) {
      const page = (await (
        await api.request(`/queries/${lake.id}?format=inline&limit=1000&starting_after=${cursor}`)
      ).json()) as Json;
      rows = [...rows, ...page.data];
      cursor = page.next_cursor;
    }
    expect(rows).toEqual(source);
    expect((await snapshot()).rowCount).toBe(source.length);
    const catalog = (await (await api.request('/catalog/layers/items')).json()) as Json;
    expect(catalog.row_count ?? (await snapshot()).rowCount).toBe(source.length);
  }

  it('adds the changed rows as a layer, reads the merged rows, and compacts after MAX_MERGES merges', async () => {
    await sync();
    const base = await snapshot();
    expect(base.layers).toBe(1);

    await adminQuery(
      "UPDATE public.items SET v = 'changed 1', changed = '2030-01-01' WHERE id IN (5, 6); INSERT INTO public.items VALUES (1001, 'new', '2030-01-01')",
      db.database,
    );
    await sync();
    const layered = await snapshot();
    expect(layered.layers).toBe(2);
    // The base parts are read from where they were written, less the rows the change replaced (a delete file):
    // nothing was rewritten.
    expect(layered.files).toEqual(expect.arrayContaining(base.files));
    expect(layered.files.filter((f) => f.includes('/delete-'))).toHaveLength(1);
    await expectSameRows();

    // A sync with nothing new re-reads only the rows at the last cursor value (>=, so none is missed), finds them
    // as the table has them, and writes nothing: no snapshot, no layer, so quiet syncs never bring compaction nearer.
    const quiet = await snapshot();
    const again = await sync();
    expect(again).toMatchObject({ status: 'succeeded' });
    expect(await snapshot()).toMatchObject({ id: quiet.id, layers: 2, files: quiet.files });
    await expectSameRows();

    for (let i = 2; i <= MAX_MERGES; i++) {
      await adminQuery(
        `UPDATE public.items SET v = 'changed ${i}', changed = '2030-01-0${Math.min(9, i)}'::timestamptz + interval '${i} hours' WHERE id IN (${i}, 6, ${100 + i})`,
        db.database,
      );
      await sync();
    }
    // The full write and MAX_MERGES merges on top.
    expect((await snapshot()).layers).toBe(MAX_MERGES + 1);
    await expectSameRows();

    // A restricted reader with a grant on the table reads every layer (files of earlier snapshots included).
    const org = api.home.organization.id;
    const member = await api.home.directory.createUser(org, 'Reader', 'member');
    const token = (
      await api.home.credentials.issue({
        kind: 'pat',
        organizationId: org,
        userId: member.id,
        name: 'r',
        scopes: ['query:read'],
      })
    ).secret;
    await api.services.permissions.setEnabled(org, true);
    await api.services.permissions.grant(org, 'layers', 'items', 'user', member.id);
    const restricted = (await (
      await api.request('/queries', {
        method: 'POST',
        token,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ sql: 'select count(*) as n, count(distinct id) as k from lake.layers.items' }),
      })
    ).json()) as Json;
    let seen: Json = {};
    for (let i = 0; i < 100 && !['succeeded', 'failed'].includes(seen.status); i++)
      seen = (await (await api.request(`/queries/${restricted.id}?wait=2&format=inline`, { token })).json()) as Json;
    expect(seen.status, JSON.stringify(seen.error)).toBe('succeeded');
    expect(seen.data).toEqual([{ n: (await snapshot()).rowCount, k: (await snapshot()).rowCount }]);
    await api.services.permissions.setEnabled(org, false);

    // Old snapshots go; the files the current one still reads stay.
    expect((await api.services.collector.collect()).snapshots).toBeGreaterThan(0);
    await expectSameRows();

    await adminQuery("UPDATE public.items SET v = 'compacted', changed = '2031-01-01' WHERE id = 1", db.database);
    await sync();
    const compacted = await snapshot();
    expect(compacted.layers).toBe(1);
    expect(compacted.files.filter((f) => f.includes('/delete-'))).toEqual([]);
    await expectSameRows();
  }, 60_000);
});
