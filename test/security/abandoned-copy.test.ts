import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DISK_FULL } from '../../src/service/syncs/table-failure.js';
import { runLake, type CliResult } from '../helpers/cli.js';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import type { Json } from '../helpers/queries.js';
import { canMountSmallDisk, folderSizes, lakeOnSmallDisk } from '../helpers/small-disk.js';
import { tempDir } from '../helpers/temp.js';

/**
 * A table lake stops reading part-way (a staging cap, a full disk) on an honest PostgreSQL. Found: the COPY's
 * connection was left unread, and PostgreSQL, blocked writing to it, does not act on a cancel, so the sync waited
 * for the idle timeout (30 minutes by default) and then failed saying the source had gone silent. Now the rest of
 * the COPY is read and thrown away while the server stops it, and the connection reads the next table.
 */
describe('a table lake gives up reading part-way', () => {
  const db = useTestDatabase();
  beforeAll(async () => {
    // About 90 MB on disk: read in two ranges over two connections, and far past any socket's buffers.
    await adminQuery(
      `CREATE TABLE public.a_wide AS SELECT g AS id, repeat(md5(g::text), 8) AS pad FROM generate_series(1, 300000) g;
       ALTER TABLE public.a_wide ADD PRIMARY KEY (id); ANALYZE public.a_wide;
       GRANT SELECT ON public.a_wide TO ${db.reader};`,
      db.database,
    );
  }, 60_000);

  /** A local home with a source on the test database, read over `connections` connections. */
  async function sourceHome(connections: number): Promise<{ home: string; source: string }> {
    const home = join(tempDir('lake-abandoned'), 'home');
    const created = await runLake([
      '--home',
      home,
      'sources',
      'create',
      '--connector',
      'postgres',
      '--name',
      'src',
      '--config',
      `host=${db.host}`,
      '--config',
      `port=${db.port}`,
      '--config',
      `user=${db.reader}`,
      '--config',
      `database=${db.database}`,
      '--config',
      `sync_connections=${connections}`,
      '--no-password',
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    return { home, source: (JSON.parse(created.stdout) as Json).id as string };
  }

  const lakeBackends = async (): Promise<number> =>
    Number(
      (
        await adminQuery(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = '${db.database}' AND application_name = 'lake'`,
        )
      ).rows[0].n,
    );

  /** The sync's tables by source name, as `lake sync start --json` ends with them. */
  function tablesOf(result: CliResult): Map<string, Json> {
    const sync = JSON.parse(result.stdout) as Json;
    return new Map((sync.tables as Json[]).map((t) => [t.table as string, t]));
  }

  for (const connections of [1, 2]) {
    it(`at the staging cap, fails that table at once and syncs the next (${connections} connection(s))`, async () => {
      const { home, source } = await sourceHome(connections);
      const started = Date.now();
      const result = await runLake(['--home', home, 'sync', 'start', source, '--json'], {
        // The idle timeout is far off: a stuck connection would show as this test's timeout, not as a failure.
        env: { LAKE_SYNC_MAX_TABLE_STAGING_BYTES: String(2 << 20), LAKE_SYNC_IDLE_TIMEOUT_SECONDS: '600' },
        timeoutMs: 60_000,
      });
      expect(Date.now() - started).toBeLessThan(20_000);
      const tables = tablesOf(result);
      expect(tables.get('public.a_wide')?.phase).toBe('failed');
      expect(tables.get('public.a_wide')?.error).toMatch(/the cap per table \(LAKE_SYNC_MAX_TABLE_STAGING_BYTES\)/);
      // Read after the abandoned table, on the connection it left (with one connection, the only one).
      expect(tables.get('public.customers')?.phase).toBe('committed');
      expect(tables.get('public.orders')?.phase).toBe('committed');
      expect(await lakeBackends()).toBe(0);
    }, 90_000);
  }

  for (const where of ['staging', 'lake'] as const) {
    it.skipIf(!canMountSmallDisk)(
      `a full disk under the ${where} folder fails the table with that reason, at once`,
      async () => {
        // One connection, so the next table is read once the full one has failed (read beside it over a second
        // connection, it would meet the same full disk).
        const { home, source } = await sourceHome(1);
        const started = Date.now();
        const run = lakeOnSmallDisk(join(home, where), 1024, ['--home', home, 'sync', 'start', source, '--json'], {
          HOME: home,
          LAKE_SYNC_IDLE_TIMEOUT_SECONDS: '600',
        });
        expect(Date.now() - started).toBeLessThan(30_000);
        const tables = tablesOf({ code: run.status, stdout: run.stdout, stderr: run.stderr });
        expect(tables.get('public.a_wide')?.phase, run.stderr).toBe('failed');
        expect(tables.get('public.a_wide')?.error).toBe(DISK_FULL);
        expect(tables.get('public.customers')?.phase).toBe('committed');
        // Nothing of the failed table is left behind to fill the disk again: the folder holds what it held, and the
        // two small tables' files.
        const { kept, used } = folderSizes(run.stderr);
        expect(used, run.stderr).toBeLessThan(kept + 512);
        expect(await lakeBackends()).toBe(0);
      },
      90_000,
    );
  }
});
