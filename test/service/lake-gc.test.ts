import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { JobStore } from '../../src/service/jobs/job-store.js';
import type { Home } from '../../src/service/home/home.js';
import { LakeCollector } from '../../src/service/storage/collector.js';
import type { LakeServices } from '../../src/service/assembly/services.js';
import type { LakeTable } from '../../src/service/storage/tables.js';
import { runLake } from '../helpers/cli.js';
import { finished, submitOk } from '../helpers/queries.js';
import { tempDir } from '../helpers/temp.js';
import { inMemory, type Harness } from '../helpers/transports.js';
import { waitFor } from '../helpers/wait-for.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NO_RETENTION = { retentionSeconds: 0, intervalMs: 600_000 };

/** Bytes under a path, as the disk holds them. */
function diskBytes(path: string): number {
  const stat = lstatSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, entry) => sum + diskBytes(join(path, entry)), 0);
}

/** Sets a folder and everything in it an hour back, as if it had been left there that long ago. */
function ageByAnHour(path: string): void {
  const then = new Date(Date.now() - 3_600_000);
  if (lstatSync(path).isDirectory()) for (const entry of readdirSync(path)) ageByAnHour(join(path, entry));
  utimesSync(path, then, then);
}

/** The folders of a table's versions (each write's parts, and a merge's delete files, are one folder). */
function snapshotFolders(home: Home, table: LakeTable): string[] {
  const dir = join(home.paths.root, 'lake', home.organization.id, 'tables', table.path);
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** The folder of the version a table reads now. */
const versionFolder = (table: LakeTable): string => basename(dirname(table.snapshot.files[0] as string));

describe('lake snapshot garbage collection', () => {
  let api: Harness | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  async function start(homeDir?: string): Promise<{ api: Harness; services: LakeServices; home: Home; org: string }> {
    api = await inMemory.start({ homeDir, services: { gcSettings: NO_RETENTION } });
    return { api, services: api.services, home: api.home, org: api.home.organization.id };
  }

  const write = (services: LakeServices, org: string, rows: number) =>
    services.lake.writeTable(org, 'gc', 't', `SELECT range AS i, 'row ' || range AS label FROM range(${rows})`);

  it('keeps the current snapshot, collects the old ones, and usage storage equals what the disk holds', async () => {
    const { services, home, org, api: harness } = await start();
    const first = await write(services, org, 100_000);
    await write(services, org, 120_000);
    const current = await write(services, org, 130_000);
    expect(snapshotFolders(home, current)).toHaveLength(3);

    // Within the retention window nothing goes.
    const patient = new LakeCollector(
      home.db,
      services.lake.layout,
      services.lake.catalogs,
      new JobStore(home.db),
      services.clock,
      { retentionSeconds: 3600, intervalMs: 600_000 },
    );
    expect(await patient.collect()).toMatchObject({ snapshots: 0, bytes_freed: 0 });

    const tablesDir = join(home.paths.root, 'lake', org, 'tables');
    const storage = async (): Promise<number> =>
      ((await (await harness.request('/usage')).json()) as { storage_bytes: number }).storage_bytes;
    expect(await storage()).toBe(diskBytes(tablesDir));
    const report = await services.collector.collect();
    // The catalog's first snapshot (it made schema main) and the two earlier writes.
    expect(report.snapshots).toBe(3);
    expect(report.bytes_freed).toBeGreaterThan(0);
    expect(snapshotFolders(home, current)).toEqual([versionFolder(current)]);
    expect(existsSync(services.lake.layout.toAbsolute(first.snapshot.files[0] as string))).toBe(false);
    const counted = await finished(
      harness,
      (await submitOk(harness, 'select count(*) as n from lake.gc.t')).id,
      '&format=inline',
    );
    expect(counted.data).toEqual([{ n: 130_000 }]);
    // What usage reports as storage is what the lake's folders hold, before and after.
    expect(await storage()).toBe(diskBytes(tablesDir));
  });

  it('never collects a snapshot a running query may read; collects it once the query has ended', async () => {
    const { services, home, org, api: harness } = await start();
    const old = await write(services, org, 100_000);
    const reading = await submitOk(harness, 'select max(hash(a.i + b.range)) as h from lake.gc.t a, range(2000) b');
    expect(reading.status).toBe('running');
    await write(services, org, 50_000);
    // Snapshots before the one the query reads may expire; none of the files it reads goes.
    await services.collector.collect();
    expect(existsSync(services.lake.layout.toAbsolute(old.snapshot.files[0] as string))).toBe(true);
    const done = await finished(harness, reading.id, '&format=inline');
    expect(done.status).toBe('succeeded');
    expect((await services.collector.collect()).snapshots).toBeGreaterThan(0);
    expect(existsSync(services.lake.layout.toAbsolute(old.snapshot.files[0] as string))).toBe(false);
    expect(snapshotFolders(home, old)).toHaveLength(1);
  });

  it('a commit killed with kill -9 loses no committed snapshot; what it left is collected', async () => {
    const { services, home, org, api: harness } = await start();
    const committed = await write(services, org, 1000);
    await harness.close();
    api = undefined;
    // Another process writes a large new snapshot of the same table and is killed while it writes.
    const script = `
      const { openHome } = await import(${JSON.stringify(join(ROOT, 'dist/service/home/home.js'))});
      const { createServices } = await import(${JSON.stringify(join(ROOT, 'dist/service/assembly/services.js'))});
      const home = await openHome(${JSON.stringify(home.paths.root)});
      const services = await createServices(home, { rateLimits: false });
      await services.lake.writeTable(home.organization.id, 'gc', 't', "SELECT range AS i, repeat('x', 200) AS label FROM range(50000000)");
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    // Killed once its new snapshot's folder holds something: mid-write, with a part on disk.
    const writing = (): string[] => {
      const folder = snapshotFolders(home, committed).find((s) => s !== versionFolder(committed));
      const dir = folder && join(home.paths.root, 'lake', home.organization.id, 'tables', committed.path, folder);
      return dir && existsSync(dir) ? readdirSync(dir) : [];
    };
    await waitFor(writing, (files) => files.length > 0, { timeoutMs: 20_000, intervalMs: 20 });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const leftovers = snapshotFolders(home, committed).filter((s) => s !== versionFolder(committed));
    expect(leftovers).toHaveLength(1);

    const reopened = await start(home.paths.root);
    const counted = await finished(
      reopened.api,
      (await submitOk(reopened.api, 'select count(*) as n from lake.gc.t')).id,
      '&format=inline',
    );
    expect(counted.data).toEqual([{ n: 1000 }]);
    // A folder that changed moments ago may still be written: it waits until it has been left alone a while.
    expect((await reopened.services.collector.collect()).orphaned_folders).toBe(0);
    ageByAnHour(join(home.paths.root, 'lake', org, 'tables', committed.path, leftovers[0] as string));
    expect((await reopened.services.collector.collect()).orphaned_folders).toBe(1);
    expect(snapshotFolders(home, committed)).toEqual([versionFolder(committed)]);
  }, 60_000);

  it('a collection killed with kill -9 loses no current snapshot; the next one finishes the work', async () => {
    const { services, home, org, api: harness } = await start();
    const tables: { table: LakeTable; rows: number }[] = [];
    for (let t = 0; t < 6; t++) {
      let table;
      for (let v = 1; v <= 6; v++)
        table = await services.lake.writeTable(org, 'gc', `t${t}`, `SELECT range AS i FROM range(${1000 * v + t})`);
      tables.push({ table: table as LakeTable, rows: 6000 + t });
    }
    await harness.close();
    api = undefined;
    const env = {
      LAKE_HOME: home.paths.root,
      LAKE_SNAPSHOT_RETENTION_MINUTES: '0',
      LAKE_CONFIG_DIR: tempDir('lake-gc-config'),
    };
    const folders = (): number => tables.reduce((sum, t) => sum + snapshotFolders(home, t.table).length, 0);
    const before = folders();
    const child = spawn(process.execPath, [join(ROOT, 'bin/lake.js'), 'admin', 'gc'], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: 'ignore',
    });
    const exited = new Promise((r) => child.once('exit', r));
    // Killed as soon as the collection has started removing folders, while it is at work.
    for (let i = 0; i < 20_000 && folders() === before && child.exitCode === null; i++)
      await new Promise((r) => setImmediate(r));
    child.kill('SIGKILL');
    await exited;
    const reopened = await start(home.paths.root);
    for (const [index, { table, rows }] of tables.entries()) {
      expect(existsSync(services.lake.layout.toAbsolute(table.snapshot.files[0] as string))).toBe(true);
      const n = await finished(
        reopened.api,
        (await submitOk(reopened.api, `select count(*) as n from lake.gc.t${index}`)).id,
        '&format=inline',
      );
      expect(n.data).toEqual([{ n: rows }]);
    }
    // Every file the catalog still names is there.
    const tablesDir = reopened.services.lake.layout.tablesDir(org);
    const named = await (await reopened.services.lake.catalogs.for(org)).namedFiles();
    expect(named.size).toBeGreaterThan(0);
    for (const path of named) expect(existsSync(join(tablesDir, path)), path).toBe(true);
    await reopened.api.close();
    api = undefined;

    // What the killed collection left (folders whose rows it had removed) goes once it has been left a while.
    ageByAnHour(join(home.paths.root, 'lake', org, 'tables'));
    const finish = await runLake(['admin', 'gc', '--json'], { env });
    expect(finish.code, finish.stderr).toBe(0);
    expect(JSON.parse(finish.stdout)).toMatchObject({ object: 'lake_collection' });
    for (const { table } of tables) expect(snapshotFolders(home, table)).toEqual([versionFolder(table)]);
    // A version retention let go is named as such (not as newer than the current one).
    const expired = await runLake(['query', 'select count(*) from gc.t0 AT (VERSION => 1)'], { env });
    expect(expired.code).not.toBe(0);
    expect(expired.stderr).toMatch(/Snapshot 1 is not in the lake: it is past retention \(the oldest kept is \d+;/);
  }, 60_000);

  it('removes the staging of syncs that are no longer live, and old catalog files nobody reads', async () => {
    const { services, home, org } = await start();
    const staging = join(home.paths.root, 'staging', 'sync_01deadbeef');
    mkdirSync(staging, { recursive: true });
    writeFileSync(join(staging, 'segment-0.csv'), 'a,b\n');
    await write(services, org, 10);
    await services.lake.catalogFile(org);
    await write(services, org, 20);
    await services.lake.catalogFile(org);
    const catalogs = join(home.paths.root, 'lake', org, 'catalogs');
    const before = readdirSync(catalogs).filter((f) => f.endsWith('.duckdb'));
    const report = await services.collector.collect();
    expect(report.staging_folders).toBe(1);
    expect(existsSync(staging)).toBe(false);
    expect(report.catalog_files).toBe(before.length - 1);
    expect(readdirSync(catalogs).filter((f) => f.endsWith('.duckdb'))).toEqual([
      `s${await services.lake.tables.catalogVersion(org)}.duckdb`,
    ]);
  });

  it('removes the catalog variants a query made for the versions it read AT, once nobody uses them, but not a live one', async () => {
    const { services, home, org, api: harness } = await start();
    const first = (await write(services, org, 10)).snapshot.id;
    const second = (await write(services, org, 20)).snapshot.id;
    await write(services, org, 30);
    const catalogs = join(home.paths.root, 'lake', org, 'catalogs');
    const variants = (): string[] => readdirSync(catalogs).filter((f) => /-r[0-9a-f]+\.duckdb$/.test(f));
    // One query ends; another, reading another set of versions, runs on while the collector works.
    const done = await finished(
      harness,
      (await submitOk(harness, `select count(*) as n from gc.t AT (VERSION => ${first})`)).id as string,
    );
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    const idle = variants();
    expect(idle).toHaveLength(1);
    const running = await submitOk(
      harness,
      `select count(*) as n from gc.t a AT (VERSION => ${second}), gc.t b, range(100000000000) r`,
    );
    await waitFor(variants, (found) => found.length === 2);
    // The current snapshot's own catalog stays, used or not.
    await services.lake.catalogFile(org);
    const report = await services.collector.collect();
    expect(report.catalog_files).toBeGreaterThanOrEqual(1);
    const left = variants();
    expect(left).toHaveLength(1);
    expect(left).not.toContain(idle[0]);
    expect(readdirSync(catalogs)).toContain(`s${await services.lake.tables.catalogVersion(org)}.duckdb`);
    await harness.request(`/queries/${running.id as string}/cancel`, { method: 'POST' });
  });
});
