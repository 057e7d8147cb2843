import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDriverBundle } from '../../src/support/source-drivers-bundled.js';
import * as fromPackages from '../../src/support/source-drivers.js';
import * as fromBundles from '../../src/support/source-drivers-bundled.js';
import { runLake } from '../helpers/cli.js';
import { sourceCreateArgs } from '../helpers/source-args.js';
import { useTestMysqlDatabase } from '../helpers/mysql.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The source drivers (pg, mysql2, zongji) load in the CLI from bundles of their own with the build's code cache
 * (scripts/bundle.mjs, decision 66), not from their packages' ~150 files: a sync pays that on every run.
 */
const DRIVERS = fileURLToPath(new URL('../../dist/drivers/', import.meta.url));

describe('the source drivers', () => {
  it('are bundled with a code cache this Node accepts, exporting what lake uses', () => {
    const pg = loadDriverBundle('pg', { dir: DRIVERS });
    const mysql2 = loadDriverBundle('mysql2', { dir: DRIVERS });
    const zongji = loadDriverBundle('zongji', { dir: DRIVERS, mysql2: mysql2.exports });
    for (const loaded of [pg, mysql2, zongji]) expect(loaded.cacheRejected).toBe(false);
    const { pg: driver, copyStreams } = pg.exports as Record<string, Record<string, unknown>>;
    expect([typeof driver?.Client, typeof driver?.Pool, typeof driver?.Query]).toEqual([
      'function',
      'function',
      'function',
    ]);
    expect([typeof copyStreams?.to, typeof copyStreams?.from]).toEqual(['function', 'function']);
    expect(typeof (mysql2.exports as Record<string, unknown>).createConnection).toBe('function');
    // What lake's row image reader reaches into: zongji's row events and its value reader.
    const { ZongJi, rowsEvent, common } = zongji.exports as Record<string, Record<string, unknown>>;
    expect(typeof ZongJi).toBe('function');
    for (const event of ['WriteRows', 'UpdateRows', 'DeleteRows'])
      expect(typeof (rowsEvent?.[event] as { prototype?: Record<string, unknown> })?.prototype?._fetchOneRow).toBe(
        'function',
      );
    expect(typeof common?.readMysqlValue).toBe('function');
    // The bundle has this module's place in the CLI: the same functions.
    expect(
      Object.keys(fromBundles)
        .filter((name) => name !== 'loadDriverBundle')
        .sort(),
    ).toEqual(Object.keys(fromPackages).sort());
  });

  describe('in a sync through the CLI', () => {
    let pgDb: TestDatabase;
    const mysqlDb = useTestMysqlDatabase();
    let env: Record<string, string>;
    let report: string;
    beforeAll(async () => {
      pgDb = await createTestDatabase();
      await mysqlDb.query(
        'CREATE TABLE items (id int PRIMARY KEY, name varchar(20)); INSERT INTO items VALUES (1, "a"), (2, "b")',
      );
      const root = tempDir('lake-source-drivers');
      report = join(root, 'modules.json');
      const preload = join(root, 'report-modules.cjs');
      // Which package files the command required, written as it exits.
      writeFileSync(
        preload,
        `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, JSON.stringify(Object.keys(require.cache))));\n`,
      );
      env = {
        LAKE_HOME: join(root, 'home'),
        LAKE_CONFIG_DIR: join(root, 'config'),
        NODE_OPTIONS: `--require ${preload}`,
      };
    });
    afterAll(async () => {
      await pgDb?.drop();
    });
    const packagesLoaded = (): string[] =>
      (JSON.parse(readFileSync(report, 'utf8')) as string[])
        .filter((file) => file.includes('node_modules'))
        .map((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1] as string);

    it.each(['postgres', 'mysql'] as const)(
      'loads the %s driver from its bundle, not its package',
      async (connector) => {
        const db = connector === 'postgres' ? pgDb : mysqlDb;
        const created = await runLake(
          [
            ...sourceCreateArgs(connector, `${connector}-shop`, {
              host: db.host,
              port: db.port,
              database: db.database,
              user: db.reader,
            }),
            '--no-password',
            '--json',
          ],
          { env },
        );
        expect(created.code, created.stderr).toBe(0);
        // Creating a source reads its tables from the server.
        expect(packagesLoaded()).not.toContain(connector === 'postgres' ? 'pg' : 'mysql2');
        const synced = await runLake(['sync', 'start', `${connector}-shop`, '--json'], { env, timeoutMs: 60_000 });
        expect(synced.code, synced.stderr).toBe(0);
        expect(JSON.parse(synced.stdout)).toMatchObject({ status: 'succeeded' });
        const loaded = packagesLoaded();
        for (const name of ['pg', 'pg-protocol', 'pg-copy-streams', 'mysql2', '@vlasky/zongji'])
          expect(loaded).not.toContain(name);
      },
    );
  });
});
