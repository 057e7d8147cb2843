import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { inMemory, type Harness } from '../helpers/transports.js';

type Json = Record<string, any>;
const db = useTestDatabase();

/** A sync's discovery of new source tables commits with what announces them, or not at all. */
describe('new source tables found before a sync', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await inMemory.start();
  });
  afterAll(async () => {
    await api.close();
  });

  it('the added tables and their record commit together: a failure in between leaves the source as it was', async () => {
    const created = (await (
      await api.request('/sources', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          connector: 'postgres',
          name: 'grows',
          config: { port: db.port, database: db.database },
          host: db.host,
          user: db.reader,
        }),
      })
    ).json()) as Json;
    await adminQuery(
      `CREATE TABLE public.arrived (id int PRIMARY KEY); GRANT SELECT ON public.arrived TO ${db.reader}`,
      db.database,
    );
    const { sources } = api.services;
    const record = async () => (await sources.store.get(api.home.organization.id, created.id as string))!;
    const before = (await record()).tables.map((t) => t.name);
    expect(before).not.toContain('arrived');

    // Killed between adding the tables and logging them: the store keeps neither.
    await expect(
      sources.addNewTables(await record(), async () => {
        throw new Error('killed here');
      }),
    ).rejects.toThrow('killed here');
    expect((await record()).tables.map((t) => t.name)).toEqual(before);

    const logged: string[] = [];
    const { added } = await sources.addNewTables(await record(), async (tables) => void logged.push(...tables));
    expect(added).toEqual(['public.arrived']);
    expect(logged).toEqual(['public.arrived']);
    expect((await record()).tables.find((t) => t.name === 'arrived')).toMatchObject({ enabled: false });
  });
});
