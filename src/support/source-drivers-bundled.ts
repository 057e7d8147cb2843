import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type vm from 'node:vm';
import type * as mysql from 'mysql2';
import type { PgDriver, ZongjiDriver } from './source-driver-types.js';

/**
 * The source drivers as the CLI bundle loads them, in source-drivers.ts's place (scripts/bundle.mjs): each from a
 * bundle of its own beside the CLI's (dist/drivers/), with V8's code cache made by the build, the first time a
 * sync, a connection check or the PostgreSQL store needs it. From their packages, pg's files load in ~11 ms and
 * mysql2's and zongji's in ~36 ms; from these bundles in ~2 and ~11 ms, which every sync of a source pays
 * (docs/performance.md, decision 66). A cache that does not fit this Node is rejected by V8: slower, never wrong.
 */
export type DriverBundleName = 'pg' | 'mysql2' | 'zongji';

/** Beside the CLI bundle (and the query worker's), whose URL import.meta.url is once bundled. */
const DRIVERS = fileURLToPath(new URL('drivers/', import.meta.url));
const loaded = new Map<DriverBundleName, unknown>();

/** bin/bundle-loader.js's runner, which starts the CLI bundle from its code cache the same way. */
interface CodeCacheRunner {
  runWithCodeCache(
    file: string,
    cacheFile: string,
    options: { useCache?: boolean; require?: NodeJS.Require },
  ): { exports: unknown; script: vm.Script; cacheRejected: boolean };
}

/** Runs one driver bundle; the build calls it without the cache, to make the cache from what ran. */
export function loadDriverBundle(
  name: DriverBundleName,
  options: { dir?: string; useCache?: boolean; mysql2?: unknown } = {},
): { exports: unknown; script: vm.Script; cacheRejected: boolean } {
  const dir = options.dir ?? DRIVERS;
  const file = join(dir, `${name}.cjs`);
  // The package's bin/, two folders above dist/drivers/ (loaded already when the CLI runs).
  const runner = createRequire(file)(join(dir, '..', '..', 'bin', 'bundle-loader.js')) as CodeCacheRunner;
  // zongji's bundle leaves mysql2 out: it gets the one mysql2 this process loads, from that bundle.
  const nodeRequire = createRequire(file);
  const requireHere = Object.assign(
    (id: string): unknown => (id === 'mysql2' ? (options.mysql2 ?? mysqlDriver()) : nodeRequire(id)),
    nodeRequire,
  );
  return runner.runWithCodeCache(file, `${file}.cache`, {
    ...(options.useCache === undefined ? {} : { useCache: options.useCache }),
    require: requireHere,
  });
}

function driver(name: DriverBundleName): unknown {
  if (!loaded.has(name)) loaded.set(name, loadDriverBundle(name).exports);
  return loaded.get(name);
}

export function pgDriver(): PgDriver {
  return driver('pg') as PgDriver;
}

export function mysqlDriver(): typeof mysql {
  return driver('mysql2') as typeof mysql;
}

export function zongjiDriver(): Promise<ZongjiDriver> {
  return Promise.resolve(driver('zongji') as ZongjiDriver);
}
