import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BUNDLE, loadBundle } from '../../bin/bundle-loader.js';
import { LAKE_BIN } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Runs the built `lake` in a home of its own with a preload that prints `expression`, evaluated as the process exits,
 * as JSON on stderr; returns the run and that value.
 */
function runReporting(args: string[], expression: string): { run: SpawnSyncReturns<string>; report: unknown } {
  const dir = tempDir('lake-startup');
  const preload = join(dir, 'report.cjs');
  writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeSync(2, '\\nREPORT ' + JSON.stringify(${expression}) + '\\n'));\n`,
  );
  const run = spawnSync(process.execPath, ['-r', preload, LAKE_BIN, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: dir, LAKE_HOME: join(dir, 'home') },
  });
  return { run, report: JSON.parse(/REPORT (.*)/.exec(run.stderr)?.[1] ?? 'null') as unknown };
}

describe('the CLI bundle', () => {
  const bundle = readFileSync(fileURLToPath(new URL('../../dist/bundle.cjs', import.meta.url)), 'utf8');

  it('loads no package at start: Ink, React, DuckDB, pg, … load when a command needs them', () => {
    // esbuild turns a static import of an external package into a require() that runs when its module is
    // initialized, for most modules at start: Ink and React alone cost ~300 ms (docs/performance.md).
    const { run, report } = runReporting(
      ['--help'],
      "Object.keys(require.cache).filter((f) => f.includes('node_modules'))",
    );
    expect(run.status).toBe(0);
    expect(report).toEqual([]);
    // Packages are required by name only where the code needs them: the only one inside the bundle is DuckDB's
    // native binding, required by DuckDB's bundled JavaScript when a query first loads it.
    const required = [...bundle.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1] as string);
    const builtins = new Set(builtinModules);
    expect([...new Set(required.filter((name) => !name.startsWith('node:') && !builtins.has(name)))]).toEqual([
      '@duckdb/node-bindings',
    ]);
    // A vm-compiled script cannot import() without an experimental option: every dynamic import goes through the loader.
    expect(bundle).not.toMatch(/\bimport\(/);
  });

  it("starts without Node's ES module loader: a local query in a pipe loads none of it", () => {
    // A CommonJS entry (bin/package.json) spares every command setting up the ES module loader (decision 14).
    const { run, report } = runReporting(
      ['query', 'select 1'],
      "process.moduleLoadList.filter((m) => m.includes('modules/esm/'))",
    );
    expect(run.status, run.stderr).toBe(0);
    const loaded = report as string[];
    expect(loaded.length).toBeGreaterThan(0);
    for (const module of ['module_job', 'translators', 'resolve'])
      expect(loaded).not.toContain(`NativeModule internal/modules/esm/${module}`);
  });

  it("answers a local query without Node's fetch classes: its requests never leave the process", () => {
    // Node builds Headers, Request and Response from its copy of undici on first use, ~20 ms (decision 67).
    const { run, report } = runReporting(
      ['query', 'select 42 as answer', '--json'],
      "[process.moduleLoadList.filter((m) => m.includes('undici')), Response.name.endsWith('InProcessResponse'), typeof Object.getOwnPropertyDescriptor(globalThis, 'Request').value]",
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('"answer"');
    expect(report).toEqual([[], true, 'function']);
  });

  it('starts from the code cache the build made for this Node', () => {
    const loaded = loadBundle();
    expect(BUNDLE.endsWith('dist/bundle.cjs')).toBe(true);
    expect(loaded.cacheRejected).toBe(false);
    expect(typeof (loaded.exports as { main?: unknown }).main).toBe('function');
  });
});
