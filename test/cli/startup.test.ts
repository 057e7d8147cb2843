import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

describe('the CLI bundle', () => {
  it('imports only Node built-ins at start; packages (Ink, React, DuckDB, pg, …) load when a command needs them', () => {
    // esbuild hoists every static import of an external package to the top of the bundle, where it runs on every
    // command: Ink and React alone cost ~300 ms. Start-up speed is a feature (docs/performance.md).
    const bundle = readFileSync(fileURLToPath(new URL('../../dist/bundle.js', import.meta.url)), 'utf8');
    // Static imports in the minified bundle: `import{a}from"x"`, `import*as b from"x"`, `import"x"` (not `import(…)`).
    const imported = [...bundle.matchAll(/(?:^|[;\n])\s*import\s*(?:[\w$*{}\s,]+?\s*from\s*)?"([^"]+)"/g)].map((m) => m[1] as string);
    expect(imported.length).toBeGreaterThan(0);
    const builtins = new Set(builtinModules);
    expect(imported.filter((name) => !name.startsWith('node:') && !builtins.has(name))).toEqual([]);
  });
});
