import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DISK_FULL } from '../../src/service/syncs/table-failure.js';
import { sourceHome, syncAtStagingCap, tablesOf } from '../helpers/abandoned-reads.js';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { canMountSmallDisk, folderSizes, lakeOnSmallDisk } from '../helpers/small-disk.js';
import type { SourceSettings } from '../helpers/source-args.js';

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

  const settings = (): SourceSettings => ({ host: db.host, port: db.port, user: db.reader, database: db.database });

  const lakeBackends = async (): Promise<number> =>
    Number(
      (
        await adminQuery(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = '${db.database}' AND application_name = 'lake'`,
        )
      ).rows[0].n,
    );

  for (const connections of [1, 2]) {
    it(`at the staging cap, fails that table at once and syncs the next (${connections} connection(s))`, async () => {
      const { home, source } = await sourceHome('postgres', settings(), connections);
      const { tables, ms } = await syncAtStagingCap(home, source);
      expect(ms).toBeLessThan(20_000);
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
        const { home, source } = await sourceHome('postgres', settings(), 1);
        const started = Date.now();
        const run = lakeOnSmallDisk(join(home, where), 1024, ['--home', home, 'sync', 'start', source, '--json'], {
          HOME: home,
          LAKE_SYNC_IDLE_TIMEOUT_SECONDS: '600',
        });
        expect(Date.now() - started).toBeLessThan(30_000);
        const tables = tablesOf(run.stdout);
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
