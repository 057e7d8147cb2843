// Bundles the CLI into one file after tsc has type-checked and compiled it. Loading one module instead of about
// a hundred saves ~55 ms on every `lake query` (docs/performance.md). Native and CommonJS packages stay outside:
// they are loaded with require, or only when used.
import { build } from 'esbuild';

await build({
  entryPoints: ['dist/cli.js'],
  outfile: 'dist/bundle.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  external: ['better-sqlite3', '@duckdb/node-api', 'commander', 'cli-table3', 'conf', 'undici', 'chalk', 'ink', 'react', 'eventsource', 'pg'],
});
