// Bundles the CLI into one file after tsc has type-checked and compiled it. Loading one module instead of about
// a hundred saves ~55 ms on every `lake query` (docs/performance.md). Native packages, and packages only some
// commands use, stay outside: they are loaded with require, or only when used. Commander, which every command
// runs, is bundled, so it is in the code cache.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { build } from 'esbuild';

/**
 * Modules of lake's own that stay separate (tsc's files in dist/), imported only when used:
 * - esbuild hoists a bundled module's external imports to the top of the bundle, so bundling the Ink view would load
 *   Ink and React (~300 ms) on every command; it is imported only by `lake sync start --follow` on a terminal.
 */
const STAY_OUTSIDE = ['render/sync-view.js'];
/**
 * Modules of lake's own that the bundle has in another's place: the source drivers come from bundles of their own
 * (below) instead of their packages' files.
 */
const REPLACED = { 'support/source-drivers.js': 'support/source-drivers-bundled.js' };
const modulesStayOutside = {
  name: 'modules-stay-outside',
  setup(builder) {
    builder.onResolve({ filter: /\.js$/ }, (args) => {
      const resolved = join(args.resolveDir, args.path);
      const path = STAY_OUTSIDE.find((kept) => resolved.endsWith(join('dist', kept)));
      if (path) return { path: `./${path}`, external: true };
      const replaced = Object.keys(REPLACED).find((module) => resolved.endsWith(join('dist', module)));
      return replaced ? { path: join(process.cwd(), 'dist', REPLACED[replaced]) } : undefined;
    });
  },
};

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  // Less text for V8 to parse on every start (~6–9 ms of a local query); identifiers stay, so stack traces read.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  plugins: [modulesStayOutside],
  external: [
    'better-sqlite3',
    '@duckdb/node-bindings',
    'conf',
    'undici',
    'chalk',
    'ink',
    'react',
    'eventsource',
    'pg',
    'mysql2',
    '@vlasky/zongji',
    'parquet-wasm',
  ],
};

// The CLI: CommonJS, so bin/lake.js can load it with V8's code cache (bin/bundle-loader.js). Every module is in
// this one file, so import.meta.url is the bundle's URL, as it was for the ES bundle.
await build({
  ...common,
  format: 'cjs',
  entryPoints: ['dist/cli.js'],
  outfile: 'dist/bundle.cjs',
  define: { 'import.meta.url': '__lakeBundleUrl' },
  banner: { js: 'var __lakeBundleUrl = require("node:url").pathToFileURL(__filename).href;' },
});
// import() inside a vm-compiled script needs an experimental loader option, so the bundle's dynamic imports call
// the loader's importer instead; any other import() left would fail at run time, so the build stops on one.
const cliBundle = readFileSync('dist/bundle.cjs', 'utf8').replace(/\bimport\((?=["'])/g, '__lakeImport(');
if (/\bimport\(/.test(cliBundle))
  throw new Error('dist/bundle.cjs: an import() of a computed specifier is left; give it a string literal.');
writeFileSync('dist/bundle.cjs', cliBundle);
rmSync('dist/bundle.js', { force: true });
// The code cache: made after a local `lake query` has run in a scratch home, so it holds the code of the CLI's
// start and of the whole local query path, compiled (V8 keeps every function compiled by then).
const { loadBundle, CODE_CACHE } = await import('../bin/bundle-loader.js');
const { exports: cli, script } = loadBundle({ useCache: false });
const scratch = mkdtempSync(join(tmpdir(), 'lake-build-'));
try {
  const sink = { write: () => true };
  const exit = await cli.main(
    ['node', 'lake', '--home', join(scratch, 'home'), 'query', 'select 1 as warm'],
    new cli.IOStreams(sink, sink, Readable.from([]), {}),
    { HOME: scratch },
    // This build process is as much the command's own as a `lake` process is: the warm-up takes the same path.
    { ownsProcess: true },
  );
  if (exit !== 0) throw new Error(`the warm-up query exited ${exit}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
writeFileSync(CODE_CACHE, script.createCachedData());
// The query worker of lake serve's pool: a process of its own, started once per worker (docs/decisions.md).
// An ES bundle: esbuild's require() of the bundled CommonJS (DuckDB's JavaScript requiring its native binding)
// needs a require in scope.
await build({
  ...common,
  entryPoints: ['dist/service/engine/worker-main.js'],
  outfile: 'dist/query-worker.js',
  banner: {
    js: 'import { createRequire as __lakeCreateRequire } from "node:module"; const require = __lakeCreateRequire(import.meta.url);',
  },
});

// The source drivers: a bundle each, with its code cache, loaded only when a sync, a connection check or the
// PostgreSQL store needs it (src/support/source-drivers-bundled.ts). zongji's bundle leaves mysql2 to its own, so a
// process holds one mysql2; zongji's row events and common module are exported for lake's row image reader (its
// package exports neither), from the same module instances its reader uses.
const packages = createRequire(join(process.cwd(), 'package.json'));
const zongjiLib = join(dirname(packages.resolve('@vlasky/zongji')), 'lib');
const DRIVERS = {
  pg: { contents: "module.exports = { pg: require('pg'), copyStreams: require('pg-copy-streams') };" },
  mysql2: { contents: "module.exports = require('mysql2');" },
  zongji: {
    contents: [
      "export { default as ZongJi } from '@vlasky/zongji';",
      `export * as rowsEvent from ${JSON.stringify(join(zongjiLib, 'rows_event.js'))};`,
      `export * as common from ${JSON.stringify(join(zongjiLib, 'common.js'))};`,
    ].join('\n'),
    external: ['mysql2'],
  },
};
const driversDir = join('dist', 'drivers');
rmSync(driversDir, { recursive: true, force: true });
mkdirSync(driversDir, { recursive: true });
for (const [name, driver] of Object.entries(DRIVERS)) {
  await build({
    stdin: { contents: driver.contents, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    // pg asks for its native binding only when told to use it, which lake never does.
    external: ['pg-native', ...(driver.external ?? [])],
    outfile: join(driversDir, `${name}.cjs`),
  });
}
const { loadDriverBundle } = await import('../dist/support/source-drivers-bundled.js');
const dir = join(process.cwd(), driversDir);
const mysql2 = loadDriverBundle('mysql2', { dir, useCache: false });
for (const [name, run] of [
  ['pg', loadDriverBundle('pg', { dir, useCache: false })],
  ['mysql2', mysql2],
  ['zongji', loadDriverBundle('zongji', { dir, useCache: false, mysql2: mysql2.exports })],
])
  writeFileSync(join(dir, `${name}.cjs.cache`), run.script.createCachedData());
