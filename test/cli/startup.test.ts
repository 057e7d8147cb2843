import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

describe('the CLI bundle', () => {
  it('imports only Node built-ins at start; packages (Ink, React, DuckDB, pg, …) load when a command needs them', () => {
    // esbuild hoists every static import of an external package to the top of the bundle, where it runs on every
    // command: Ink and React alone cost ~300 ms. Start-up speed is a feature (docs/performance.md).
    const bundle = readFileSync(fileURLToPath(new URL('../../dist/bundle.js', import.meta.url)), 'utf8');
    const imported = [...bundle.matchAll(/^import\s[^;]*?\sfrom\s*"([^"]+)";?$/gm)].map((m) => m[1] as string);
    expect(imported.length).toBeGreaterThan(0);
    const builtins = new Set(builtinModules);
    expect(imported.filter((name) => !name.startsWith('node:') && !builtins.has(name))).toEqual([]);
  });
});
