import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { canMountSmallDisk, lakeOnSmallDisk } from '../helpers/small-disk.js';
import { tempDir } from '../helpers/temp.js';

/**
 * A local lake whose disk is full. Found: a command said `unexpected_error: disk I/O error` with "This looks like a
 * bug in lake", and one that failed inside its request said `internal_error`, pointing at a log file the full disk
 * had not let it write.
 */
describe('a lake home on a full disk', () => {
  const newHome = async (): Promise<string> => {
    const home = join(tempDir('lake-home-disk'), 'home');
    expect((await runLake(['--home', home, 'query', 'select 1'])).code).toBe(0);
    return home;
  };

  it.skipIf(!canMountSmallDisk)('a command that cannot open the home says the disk is full', async () => {
    const home = await newHome();
    const run = lakeOnSmallDisk(home, 0, ['--home', home, 'sources', 'ls'], { HOME: home });
    expect(run.stderr).toMatch(/^error disk_full: The disk that holds the lake home is full/m);
    expect(run.stderr).toContain('Free space on that disk, then run the command again.');
    expect(run.stderr).not.toMatch(/unexpected_error|bug in lake/);
  });

  it.skipIf(!canMountSmallDisk)(
    'a request that fills it is refused as the disk being full, never as a failure of lake',
    async () => {
      const home = await newHome();
      // Sources are made (each named after the connector, numbered) until the home's metadata can grow no more.
      const run = lakeOnSmallDisk(
        home,
        64,
        ['--home', home, 'sources', 'create', '--connector', 'sample', '--config', 'scale=1'],
        { HOME: home },
        400,
      );
      const runs = Number(/runs=(\d+)/.exec(run.stderr)?.[1]);
      expect(runs, run.stderr).toBeGreaterThan(1);
      expect(runs, run.stderr).toBeLessThan(400);
      // Filled inside a request (the home opened) or when the next command opened it.
      expect(run.stderr).toMatch(
        /^error (service_unavailable: The disk that holds the lake home is full, so lake could not complete this request|disk_full: The disk that holds the lake home is full)/m,
      );
      expect(run.stderr).not.toMatch(/unexpected_error|internal_error|bug in lake/);
    },
    120_000,
  );
});
