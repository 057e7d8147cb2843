import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { sourceCreateArgs } from '../helpers/source-args.js';

describe('lake sources and lake connectors', () => {
  let env: Record<string, string>;
  let db: TestDatabase;
  beforeAll(async () => {
    const root = tempDir('lake-sources-cli');
    env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });
  const lake = (args: string[], input?: string) => runLake(args, { env, input });

  it('creates a PostgreSQL source with the password from stdin, tests, changes, pauses, resumes and deletes it', async () => {
    const created = await lake(
      [
        ...sourceCreateArgs('postgres', 'shop', {
          host: 'localhost',
          port: db.port,
          database: db.database,
          user: db.reader,
        }),
        '--password-stdin',
        '--json',
      ],
      'pw-from-stdin-123\n',
    );
    expect(created.code, created.stderr).toBe(0);
    const source = JSON.parse(created.stdout) as {
      id: string;
      credentials: Record<string, string>;
      tables: { name: string }[];
    };
    expect(source.credentials).toEqual({ host: 'set', password: 'set', user: 'set' });
    expect(source.tables.map((t) => t.name)).toEqual(['customers', 'orders']);
    expect(created.stdout).not.toContain('pw-from-stdin-123');
    expect(created.stdout).not.toContain(db.reader);

    const tested = await lake(['sources', 'test', source.id]);
    expect(tested.code).toBe(0);
    expect(tested.stdout).toMatch(/ok\ttrue/);

    const updated = await lake([
      'sources',
      'update',
      source.id,
      '--incremental',
      'public.orders:updated_at',
      '--disable',
      'public.customers',
      '--json',
    ]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout).tables).toEqual([
      expect.objectContaining({ name: 'customers', enabled: false }),
      expect.objectContaining({ name: 'orders', mode: 'incremental', cursor_column: 'updated_at' }),
    ]);

    expect((await lake(['sources', 'pause', source.id])).stderr).toContain('paused');
    expect((await lake(['sources', 'get', source.id])).stdout).toMatch(/status\tpaused/);
    expect((await lake(['sources', 'resume', source.id])).stderr).toContain('active');
    const listed = await lake(['sources', 'ls']);
    expect(listed.stdout).toMatch(new RegExp(`${source.id},shop,postgres,active,1/2,`));

    expect((await lake(['sources', 'delete', source.id])).code).toBe(0);
    const gone = await lake(['sources', 'get', source.id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('source_not_found');
  });

  it('takes a schedule on create and update, shows it and the next sync, and clears it with --no-schedule', async () => {
    const created = await lake(['sources', 'create', '--connector', 'sample', '--name', 'timed', '--schedule', '1h']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/schedule\tevery 1h/);
    expect(created.stdout).toMatch(/next sync\t\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/);
    const id = /id\t(src_\w+)/.exec(created.stdout)?.[1] as string;
    const cron = await lake(['sources', 'update', id, '--schedule', '0 6 * * 1-5', '--time-zone', 'Europe/Berlin']);
    expect(cron.code, cron.stderr).toBe(0);
    expect(cron.stdout).toMatch(/schedule\t0 6 \* \* 1-5 \(Europe\/Berlin\)/);
    const listed = await lake(['sources', 'ls', '--json']);
    expect(JSON.parse(listed.stdout).data[0]).toMatchObject({ id, schedule: { cron: '0 6 * * 1-5' } });
    // A time zone with an interval is a usage error, caught before any request.
    const zoned = await lake(['sources', 'update', id, '--schedule', '15m', '--time-zone', 'UTC']);
    expect(zoned.code).toBe(2);
    expect(zoned.stderr).toContain('--time-zone');
    // One the service cannot read names the field, and the source keeps its schedule.
    const bad = await lake(['sources', 'update', id, '--schedule', '61 * * * *']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('invalid_source_parameters');
    expect(bad.stderr).toContain('minute');
    expect((await lake(['sources', 'get', id])).stdout).toMatch(/schedule\t0 6/);
    // Both at once is a usage error, whichever comes last (commander kept the last and dropped the other).
    for (const both of [
      ['--schedule', '15m', '--no-schedule'],
      ['--no-schedule', '--schedule=15m'],
    ]) {
      const contradicted = await lake(['sources', 'update', id, ...both]);
      expect(contradicted.code).toBe(2);
      expect(contradicted.stderr).toContain('--schedule and --no-schedule');
    }
    expect((await lake(['sources', 'get', id])).stdout).toMatch(/schedule\t0 6/);
    const cleared = await lake(['sources', 'update', id, '--no-schedule', '--json']);
    expect(JSON.parse(cleared.stdout)).toMatchObject({ schedule: null, next_sync_at: null });
    expect((await lake(['sources', 'get', id])).stdout).toMatch(/schedule\tnone/);
  });

  it('a failing test exits 1 with a generic reason; a password on the command line is refused', async () => {
    const created = await lake([
      ...sourceCreateArgs('postgres', undefined, {
        host: 'localhost',
        port: db.port,
        database: `${db.database}_missing`,
        user: db.reader,
      }),
      '--no-password',
      '--json',
    ]);
    // Created (the database may come up later), but not in silence: a warning says why no tables were found.
    expect(created.code).toBe(0);
    const source = JSON.parse(created.stdout) as { id: string };
    expect(created.stderr).toContain(
      `warning: ${source.id} was created, but its database could not be used (database_not_found)`,
    );
    expect(created.stderr).not.toContain(db.database);
    const tested = await lake(['sources', 'test', source.id, '--json']);
    expect(tested.code).toBe(1);
    expect(JSON.parse(tested.stdout)).toMatchObject({
      object: 'source_test',
      supported: true,
      ok: false,
      reason: 'database_not_found',
    });
    expect(tested.stdout + tested.stderr).not.toContain(db.database);
    // On a terminal or a pipe alike, the reason comes with what to check and the command that changes it.
    expect(created.stderr).toContain(
      `check its database's name (lake sources update ${source.id} --config database=…)`,
    );
    const plain = await lake(['sources', 'test', source.id]);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toMatch(/reason\tdatabase_not_found/);
    expect(plain.stderr).toContain(
      `lake: the source could not be used: check its database's name (lake sources update ${source.id} --config database=…).`,
    );
    const unreachable = await lake(['sources', 'update', source.id, '--config', 'port=1']);
    expect(unreachable.code, unreachable.stderr).toBe(0);
    const refused = await lake(['sources', 'test', source.id]);
    expect(refused.stderr).toContain(`check its host and port (lake sources update ${source.id} --config host=…`);

    const flagged = await lake(['sources', 'create', '--connector', 'postgres', '--config', 'password=hunter2']);
    expect(flagged.code).toBe(2);
    expect(flagged.stderr).toContain('--password-stdin');
  });

  it('refused connectors explain themselves; connectors ls says which lake sources create takes', async () => {
    const oauth = await lake(['sources', 'create', '--connector', 'salesforce']);
    expect(oauth.code).toBe(1);
    expect(oauth.stderr).toMatch(/invalid_source_parameters.*OAuth/);
    const connectors = await lake(['connectors', 'ls']);
    expect(connectors.stdout).toMatch(
      /^name,title,auth,syncs,create\npostgres,PostgreSQL,key,true,yes\nmysql,MySQL and MariaDB,key,true,yes\nsample,/,
    );
  });
});
