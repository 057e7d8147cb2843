import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BUNDLE, loadBundle } from '../../bin/bundle-loader.js';

describe('the CLI bundle', () => {
  const bundle = readFileSync(fileURLToPath(new URL('../../dist/bundle.cjs', import.meta.url)), 'utf8');

  it('requires only Node built-ins by name; packages (Ink, React, DuckDB, pg, …) load when a command needs them', () => {
    // esbuild turns every static import of an external package into a require() that runs when its module is
    // initialized, for most modules at start: Ink and React alone cost ~300 ms. Packages load through
    // requireCommonJs or the loader's import, where a command needs them (docs/performance.md).
    const required = [...bundle.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1] as string);
    expect(required.length).toBeGreaterThan(0);
    const builtins = new Set(builtinModules);
    expect(required.filter((name) => !name.startsWith('node:') && !builtins.has(name))).toEqual([]);
    // A vm-compiled script cannot import() without an experimental option: every dynamic import goes through the loader.
    expect(bundle).not.toMatch(/\bimport\(/);
  });

  it('starts from the code cache the build made for this Node', () => {
    const loaded = loadBundle();
    expect(BUNDLE.endsWith('dist/bundle.cjs')).toBe(true);
    expect(loaded.cacheRejected).toBe(false);
    expect(typeof (loaded.exports as { main?: unknown }).main).toBe('function');
  });
});
