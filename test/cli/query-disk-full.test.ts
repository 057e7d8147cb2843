import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { canMountSmallDisk, folderSizes, lakeOnSmallDisk } from '../helpers/small-disk.js';
import { tempDir } from '../helpers/temp.js';

/**
 * A query whose result does not fit on lake's disk. Found: it failed `query_failed` with DuckDB's "Could not write
 * file …: No space left on device" and the hint to fix the SQL, which is not at fault.
 */
describe('a query that fills the disk', () => {
  it.skipIf(!canMountSmallDisk)(
    'fails server_disk_full, says the SQL is not at fault, and leaves no part of its result behind',
    async () => {
      const home = join(tempDir('lake-query-disk'), 'home');
      expect((await runLake(['--home', home, 'query', 'select 1'])).code).toBe(0);
      const run = lakeOnSmallDisk(
        join(home, 'results'),
        512,
        ['--home', home, 'query', 'select i, md5(i::varchar) AS h FROM range(2000000) t(i)', '--json'],
        { HOME: home },
      );
      // With --json, the error is one line on stderr (before the folder's sizes), and nothing is on stdout.
      expect(run.stdout).toBe('');
      const error = (
        JSON.parse(run.stderr.split('\n')[0] as string) as {
          error?: { code?: string; message?: string };
        }
      ).error;
      expect(error?.code, run.stderr).toBe('server_disk_full');
      expect(error?.message).toMatch(/the SQL is not at fault/);
      expect(error?.message).not.toContain(home);
      const { kept, used } = folderSizes(run.stderr);
      expect(used, run.stderr).toBeLessThan(kept + 64);
      // The next query, with room again, answers.
      const again = await runLake(['--home', home, 'query', 'select 42 AS x']);
      expect(again.stdout).toBe('x\n42\n');
    },
    60_000,
  );
});
