// Bundles the CLI into one file after tsc has type-checked and compiled it. Loading one module instead of about
// a hundred saves ~55 ms on every `lake query` (docs/performance.md). Native and CommonJS packages stay outside:
// they are loaded with require, or only when used.
import { build } from 'esbuild';

/**
 * esbuild hoists a bundled module's external imports to the top of the bundle, so bundling the Ink view would load
 * Ink and React (~300 ms) on every command. The view stays a separate module (tsc's dist/render/sync-view.js),
 * imported only by `lake sync start --follow` on a terminal.
 */
const inkViewsStayOutside = {
  name: 'ink-views-stay-outside',
  setup(builder) {
    builder.onResolve({ filter: /\/render\/sync-view\.js$/ }, () => ({ path: './render/sync-view.js', external: true }));
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
  plugins: [inkViewsStayOutside],
  external: ['better-sqlite3', '@duckdb/node-api', 'commander', 'cli-table3', 'conf', 'undici', 'chalk', 'ink', 'react', 'eventsource', 'pg'],
};

await build({ ...common, entryPoints: ['dist/cli.js'], outfile: 'dist/bundle.js' });
// The query worker of lake serve's pool: a process of its own, started once per worker (docs/decisions.md).
await build({ ...common, entryPoints: ['dist/service/engine/worker-main.js'], outfile: 'dist/query-worker.js' });
