import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createServices, type LakeServices } from '../../src/service/assembly/services.js';
import { openHome, type Home, type HomeOptions } from '../../src/service/home/home.js';
import { createMetadataDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every file the organization's catalog names is on disk: a commit never names a file it did not write whole. */
async function expectEveryNamedFile(services: LakeServices, org: string): Promise<void> {
  const tablesDir = services.lake.layout.tablesDir(org);
  const named = await (await services.lake.catalogs.for(org)).namedFiles();
  for (const path of named) expect(existsSync(join(tablesDir, path)), path).toBe(true);
}

describe('DuckLake commits under concurrency and kill -9', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  async function open(root: string, options: HomeOptions = {}): Promise<{ home: Home; services: LakeServices }> {
    const home = await openHome(root, options);
    const services = await createServices(home, { rateLimits: false });
    cleanups.push(async () => {
      await services.close();
      await home.close();
    });
    return { home, services };
  }

  it('two replicas committing tables of one organization at once on PostgreSQL: consecutive snapshots, none lost', async () => {
    const database = await createMetadataDatabase();
    cleanups.push(database.drop);
    const keys = tempDir('lake-commit-keys');
    const keyFile = (name: string): string => {
      writeFileSync(join(keys, name), randomBytes(32).toString('hex'), { mode: 0o600 });
      return join(keys, name);
    };
    const shared: HomeOptions = {
      metadataUrl: database.url,
      dataDir: tempDir('lake-commit-data'),
      signingKeyFile: keyFile('signing.key'),
      secretsKeyFile: keyFile('secrets.key'),
    };
    const a = await open(join(tempDir('lake-replica-a'), 'home'), shared);
    const b = await open(join(tempDir('lake-replica-b'), 'home'), shared);
    const org = a.home.organization.id;
    expect(b.home.organization.id).toBe(org);
    const catalog = await a.services.lake.catalogs.for(org);
    const before = await catalog.currentSnapshot();
    const writes = [a, b].flatMap((replica, r) =>
      Array.from({ length: 5 }, (_, i) =>
        replica.services.lake.writeTable(org, 'race', `t${r}_${i}`, `SELECT range AS id FROM range(${100 * (i + 1)})`),
      ),
    );
    const committed = await Promise.all(writes);
    const snapshots = committed.map((t) => t.snapshot.id).sort((x, y) => x - y);
    // Ten commits, ten snapshots: max+1 under the catalog's lock, in turn.
    expect(snapshots).toEqual(Array.from({ length: 10 }, (_, i) => before + 1 + i));
    const tables = await b.services.lake.tables.list(org);
    for (const [r, i] of [0, 1].flatMap((r) => [0, 1, 2, 3, 4].map((i) => [r, i] as const)))
      expect(tables.find((t) => t.name === `t${r}_${i}`)?.snapshot.rowCount).toBe(100 * (i + 1));
    await expectEveryNamedFile(a.services, org);
  }, 60_000);

  it('a merge killed with kill -9 at any moment leaves the table at the snapshot before or the one after', async () => {
    const root = join(tempDir('lake-commit-kill'), 'home');
    let { services, home } = await open(root);
    const org = home.organization.id;
    await services.lake.writeTable(org, 'k', 't', 'SELECT range AS id, range AS v FROM range(3000000)');
    await services.close();
    await home.close();
    cleanups.pop();
    // Each round another process merges 300,000 changed rows (delete files are written inside the commit) and is
    // killed after a different delay: while it writes its part, while it commits, or after.
    let expected = 3_000_000;
    const seen = new Set<string>();
    // The last round is not killed: it commits, so the count after a merge is checked too.
    for (const [round, delayMs] of [150, 400, 700, 1000, 1400, 2000, 4000, undefined].entries()) {
      const script = `
        const { openHome } = await import(${JSON.stringify(join(ROOT, 'dist/service/home/home.js'))});
        const { createServices } = await import(${JSON.stringify(join(ROOT, 'dist/service/assembly/services.js'))});
        const home = await openHome(${JSON.stringify(root)});
        const services = await createServices(home, { rateLimits: false });
        await services.lake.writeTable(home.organization.id, 'k', 't',
          'SELECT CASE WHEN range % 2 = 0 THEN range * 10 ELSE ${10_000_000 * (round + 1)} + range END AS id, ${round + 1} AS v FROM range(300000)',
          { mergeOn: { key: ['id'] } });
        process.stdout.write('committed');
      `;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const exited = new Promise((r) => child.once('exit', r));
      if (delayMs !== undefined) {
        await new Promise((r) => setTimeout(r, delayMs));
        child.kill('SIGKILL');
      }
      await exited;
      if (delayMs === undefined) expect(out).toBe('committed');
      ({ services, home } = await open(root));
      const table = await services.lake.tables.get(org, 'k', 't');
      // The catalog takes commits again: nothing the killed process held is left held.
      const counted = await services.lake.writeTable(org, 'check', `r${round}`, 'SELECT 1 AS one');
      expect(counted.snapshot.rowCount).toBe(1);
      // Half the merged rows replace rows the table has (a delete file), half are new: 150,000 more, or none.
      const after = expected + 150_000;
      expect([expected, after]).toContain(table?.snapshot.rowCount);
      seen.add(table?.snapshot.rowCount === expected ? 'before' : 'after');
      expected = table?.snapshot.rowCount as number;
      if (out === 'committed') expect(table?.snapshot.rowCount).toBe(after);
      await expectEveryNamedFile(services, org);
      await services.close();
      await home.close();
      cleanups.pop();
    }
    // Some rounds were killed before their commit; the last one committed.
    expect(seen.has('before')).toBe(true);
    expect(seen.has('after')).toBe(true);
  }, 180_000);
});
