#!/usr/bin/env node
// Start-up cost of `lake`, as a ratio to bare Node measured in the same run (not a timed test).
// Usage: node bench/startup.mjs [runs]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const runs = Number(process.argv[2] ?? 21);
const lake = fileURLToPath(new URL('../bin/lake.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'lake-bench-'));
const env = { ...process.env, LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };

const cases = {
  'node -e 0': [process.execPath, ['-e', '0']],
  'lake --help': [process.execPath, [lake, '--help']],
  'lake whoami (local)': [process.execPath, [lake, 'whoami']],
};

function timeOnce([command, args]) {
  const started = process.hrtime.bigint();
  const result = spawnSync(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

// Warm up the file cache and create the home once, so every measured run does the same work.
for (const c of Object.values(cases)) timeOnce(c);
const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
for (let i = 0; i < runs; i++) for (const [name, c] of Object.entries(cases)) samples[name].push(timeOnce(c));
rmSync(root, { recursive: true, force: true });

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const baseline = median(samples['node -e 0']);
console.log(`startup, median of ${runs} runs, interleaved (node ${process.version})`);
for (const [name, values] of Object.entries(samples)) {
  const ms = median(values);
  console.log(`${name.padEnd(22)} ${ms.toFixed(1).padStart(7)} ms   ${(ms / baseline).toFixed(2)}x node`);
}
const helpRatio = median(samples['lake --help']) / baseline;
console.log(
  `target: lake --help within 2.5x of node: ${helpRatio <= 2.5 ? 'met' : 'NOT met'} (${helpRatio.toFixed(2)}x)`,
);
