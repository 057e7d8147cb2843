import { join } from 'node:path';
import { expect } from 'vitest';
import { runLake } from './cli.js';
import type { Json } from './queries.js';
import { sourceCreateArgs, type SourceSettings } from './source-args.js';
import { tempDir } from './temp.js';

/** A local home with a source on a test database (its reader, no password), read over `connections` connections. */
export async function sourceHome(
  connector: 'postgres' | 'mysql',
  settings: SourceSettings,
  connections: number,
): Promise<{ home: string; source: string }> {
  const home = join(tempDir('lake-abandoned'), 'home');
  const created = await runLake([
    '--home',
    home,
    ...sourceCreateArgs(connector, 'src', settings),
    '--config',
    `sync_connections=${connections}`,
    '--no-password',
    '--json',
  ]);
  expect(created.code, created.stderr).toBe(0);
  return { home, source: (JSON.parse(created.stdout) as Json).id as string };
}

/** The sync's tables by source name, as `lake sync start --json` ends with them. */
export function tablesOf(stdout: string): Map<string, Json> {
  return new Map(((JSON.parse(stdout) as Json).tables as Json[]).map((t) => [t.table as string, t]));
}

/**
 * `lake sync start` with a per-table staging cap (2 MiB unless given), of `tables` or all, and how long it took.
 * The idle timeout is far off: a connection left stuck shows as this taking a minute, not as a failure with another
 * reason.
 */
export async function syncAtStagingCap(
  home: string,
  source: string,
  options: { capBytes?: number; tables?: string[] } = {},
): Promise<{ tables: Map<string, Json>; ms: number }> {
  const started = Date.now();
  const only = options.tables ? ['--tables', options.tables.join(',')] : [];
  const result = await runLake(['--home', home, 'sync', 'start', source, ...only, '--json'], {
    env: {
      LAKE_SYNC_MAX_TABLE_STAGING_BYTES: String(options.capBytes ?? 2 << 20),
      LAKE_SYNC_IDLE_TIMEOUT_SECONDS: '600',
    },
    timeoutMs: 60_000,
  });
  const ms = Date.now() - started;
  expect(result.stdout, result.stderr).not.toBe('');
  return { tables: tablesOf(result.stdout), ms };
}
