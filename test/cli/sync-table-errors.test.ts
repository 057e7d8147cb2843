import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { adminQuery, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { sourceCreateArgs } from '../helpers/source-args.js';

type Json = Record<string, any>;

describe('a table that fails in a sync says why, everywhere the sync is shown', () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  let source: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    // The limited role may read customers but not this table: one of the two tables fails.
    await adminQuery('CREATE TABLE public.locked (id int PRIMARY KEY)', db.database);
    const root = tempDir('lake-sync-errors');
    env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
    const created = await runLake(
      [
        ...sourceCreateArgs('postgres', 'locked', {
          host: db.host,
          port: db.port,
          database: db.database,
          user: db.limited,
        }),
        '--password-stdin',
        '--json',
      ],
      { env, input: 'unused\n' },
    );
    expect(created.code, created.stderr).toBe(0);
    source = (JSON.parse(created.stdout) as Json).id as string;
    const only = await runLake(['sources', 'update', source, '--disable', 'public.orders'], { env });
    expect(only.code, only.stderr).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await db?.drop();
  });

  it("the sync object, the stream's last event and the --follow summary carry the table's reason, without connection details", async () => {
    const followed = await runLake(['sync', 'start', source, '--follow'], { env });
    expect(followed.code).toBe(1);
    // The plain line of the failed table, and the summary, say why.
    expect(followed.stdout).toMatch(/public\.locked failed \d+\/\S+: permission denied for table locked/);
    expect(followed.stdout).toMatch(
      /sync failed: 1 of 2 tables failed: public\.locked \(permission denied for table locked\)\. The other tables were committed\./,
    );
    expect(followed.stderr).toMatch(/lake\.locked\.locked {2}failed {2}permission denied for table locked/);
    expect(followed.stderr).toMatch(/lake\.locked\.customers {2}committed {2}50 rows/);

    const status = await runLake(['sync', 'status', source, '--json'], { env });
    const sync = JSON.parse(status.stdout) as Json;
    expect(sync.status).toBe('failed');
    expect(sync.error).toMatchObject({
      code: 'tables_failed',
      message: expect.stringContaining('public.locked (permission denied for table locked)'),
    });
    const locked = (sync.tables as Json[]).find((t) => t.table === 'public.locked');
    expect(locked).toMatchObject({ phase: 'failed', error: 'permission denied for table locked' });
    expect((sync.tables as Json[]).find((t) => t.table === 'public.customers')).not.toHaveProperty('error');

    const events = await runLake(['jobs', 'events', sync.id as string, '--json'], { env });
    const last = events.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json)
      .at(-1) as Json;
    expect(last.event).toBe('job.failed');
    expect(last.data.error.message).toContain('public.locked (permission denied for table locked)');

    for (const text of [followed.stdout, followed.stderr, status.stdout, events.stdout]) {
      expect(text).not.toContain(db.limited);
      expect(text).not.toContain(db.database);
    }
  });

  it('a sync whose every table fails says that none was committed', async () => {
    const synced = await runLake(['sync', 'start', source, '--tables', 'public.locked', '--json'], { env });
    expect(synced.code).toBe(1);
    expect((JSON.parse(synced.stdout) as Json).error).toEqual({
      code: 'tables_failed',
      message: '1 of 1 table failed: public.locked (permission denied for table locked). No table was committed.',
    });
  });
});

/**
 * A table whose rows PostgreSQL gave but DuckDB cannot load (a `json` value with a lone surrogate, which only
 * PostgreSQL's text-keeping json accepts) fails while its later segments still wait to be loaded and the next table
 * is already being read: the sync must end, that table say why, and the other table commit.
 */
describe('a table that fails while loading, with more of it still queued', () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  let source: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    await adminQuery(
      `CREATE TABLE public.docs (id int PRIMARY KEY, doc json);
       INSERT INTO public.docs SELECT g, CASE WHEN g = 5 THEN '"\\ud800"'::json ELSE '{"n": 1}'::json END FROM generate_series(1, 1200000) g;
       GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${db.reader};`,
      db.database,
    );
    const root = tempDir('lake-sync-load-errors');
    env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
    const created = await runLake(
      [
        ...sourceCreateArgs('postgres', 'docs', {
          host: db.host,
          port: db.port,
          database: db.database,
          user: db.reader,
        }),
        '--config',
        'sync_connections=1',
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

  it('ends, says why, and commits the other tables', async () => {
    const synced = await runLake(['sync', 'start', source, '--json'], { env, timeoutMs: 90_000 });
    expect(synced.code, synced.stderr).toBe(1);
    const sync = JSON.parse(synced.stdout) as Json;
    expect(sync.status).toBe('failed');
    expect((sync.tables as Json[]).find((t) => t.table === 'public.docs')).toMatchObject({
      phase: 'failed',
      error: expect.stringMatching(/Malformed JSON/),
    });
    expect((sync.tables as Json[]).filter((t) => t.table !== 'public.docs').every((t) => t.phase === 'committed')).toBe(
      true,
    );
    const counted = await runLake(['query', 'select count(*) AS n from lake.docs.customers', '--json'], { env });
    expect(counted.code, counted.stderr).toBe(0);
    expect(counted.stdout).toContain('"n":50');
  }, 120_000);
});
