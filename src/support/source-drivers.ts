import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as mysql from 'mysql2';
import { requireCommonJs } from './load-commonjs.js';
import type { PgDriver, ZongjiDriver } from './source-driver-types.js';

/**
 * The source drivers, loaded only by the work that reaches a source or the PostgreSQL store, from their packages.
 * The CLI bundle has source-drivers-bundled.ts in this module's place (scripts/bundle.mjs): the same drivers from
 * bundles of their own with V8's code cache. This one serves the tests that run lake's modules from source.
 */
export function pgDriver(): PgDriver {
  return {
    pg: requireCommonJs('pg') as PgDriver['pg'],
    copyStreams: requireCommonJs('pg-copy-streams') as PgDriver['copyStreams'],
  };
}

export function mysqlDriver(): typeof mysql {
  return requireCommonJs('mysql2') as typeof mysql;
}

/** zongji is an ES module; its own modules are imported by path, as its package exports only its reader. */
export async function zongjiDriver(): Promise<ZongjiDriver> {
  const lib = join(dirname(requireCommonJs.resolve('@vlasky/zongji')), 'lib');
  const load = (file: string): Promise<Record<string, unknown>> =>
    import(pathToFileURL(join(lib, file)).href) as Promise<Record<string, unknown>>;
  const [reader, rowsEvent, common] = await Promise.all([
    import('@vlasky/zongji') as Promise<{ default: unknown }>,
    load('rows_event.js'),
    load('common.js'),
  ]);
  return { ZongJi: reader.default, rowsEvent, common };
}
