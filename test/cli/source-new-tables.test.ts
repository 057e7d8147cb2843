import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { adminQuery, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { sourceCreateArgs } from '../helpers/source-args.js';

type Json = Record<string, any>;

/** Tables that appear in a source after it was made (issue 31): found by a test and by a sync, added off, and said. */
describe('new tables in a source', () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  let source: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    const root = tempDir('lake-new-tables');
    env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
    const created = await runLake(
      [
        ...sourceCreateArgs('postgres', 'grows', {
          host: db.host,
          port: db.port,
          database: db.database,
          user: db.reader,
        }),
        '--password-stdin',
        '--json',
      ],
      { env, input: 'unused\n' },
    );
    expect(created.code, created.stderr).toBe(0);
    source = (JSON.parse(created.stdout) as Json).id as string;
  }, 60_000);
  afterAll(async () => {
    await db?.drop();
  });

  const tablesOf = async (): Promise<Json[]> =>
    (JSON.parse((await runLake(['sources', 'get', source, '--json'], { env })).stdout) as Json).tables as Json[];
  const addTable = async (name: string): Promise<void> => {
    await adminQuery(
      `CREATE TABLE public.${name} (id int PRIMARY KEY); INSERT INTO public.${name} VALUES (1); GRANT SELECT ON public.${name} TO ${db.reader}`,
      db.database,
    );
  };

  it('a connection test names the new tables, which arrive off; the API answers them as new_tables', async () => {
    await addTable('arrived_by_test');
    const tested = await runLake(['sources', 'test', source], { env });
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.stderr).toContain(
      `lake: 1 new table found, off until enabled: public.arrived_by_test. Turn one on with: lake sources update ${source} --enable public.arrived_by_test`,
    );
    expect((await tablesOf()).find((t) => t.name === 'arrived_by_test')).toMatchObject({ enabled: false });
    // Found once: the next test has nothing new to say.
    const again = JSON.parse((await runLake(['sources', 'test', source, '--json'], { env })).stdout) as Json;
    expect(again).toMatchObject({ ok: true, new_tables: [] });
  });

  it('a sync finds them too: added off, not synced, written to the source log, and told to whoever started it', async () => {
    await addTable('arrived_by_sync');
    const synced = await runLake(['sync', 'start', source], { env });
    expect(synced.code, synced.stderr).toBe(0);
    expect(synced.stderr).toContain(
      `lake: 1 new table found in the source, off until enabled: public.arrived_by_sync. Turn one on with: lake sources update ${source} --enable public.arrived_by_sync`,
    );
    expect((await tablesOf()).find((t) => t.name === 'arrived_by_sync')).toMatchObject({ enabled: false });
    const catalog = JSON.parse((await runLake(['catalog', 'ls', 'grows', '--json'], { env })).stdout) as Json;
    const names = (catalog.data as Json[]).map((t) => t.name as string);
    expect(names).toContain('orders');
    expect(names).not.toContain('arrived_by_sync');
    const logs = JSON.parse(
      (await runLake(['logs', '--source', source, '--kind', 'schema_change', '--json'], { env })).stdout,
    ) as Json;
    expect((logs.data as Json[]).map((l) => l.table)).toContain('public.arrived_by_sync');
    // Enabled, it syncs.
    expect((await runLake(['sources', 'update', source, '--enable', 'public.arrived_by_sync'], { env })).code).toBe(0);
    const second = await runLake(['sync', 'start', source], { env });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toContain('new table');
    const rows = await runLake(['query', 'select count(*) as n from grows.arrived_by_sync'], { env });
    expect(rows.stdout).toBe('n\n1\n');
  }, 120_000);
});
