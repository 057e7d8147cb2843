#!/usr/bin/env node
// A large result to a file (not a timed test): `lake query "select …" --output csv > file` as a whole process, local
// and against `lake serve`, against DuckDB's own `COPY (…) TO 'file.csv'` of the same query in a Node script, in the
// same run. Usage: node bench/export.mjs [rows]   (default 10,000,000)
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServe } from './serve-process.mjs';

const rows = Number(process.argv[2] ?? 10_000_000);
const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'lake-bench-export-'));
const sql = `select range as id, range * 2.5 as amount, 'customer ' || (range % 100000)::varchar as customer, DATE '2024-01-01' + (range % 365)::int as day from range(${rows})`;

/** Runs a command to the end; with `out`, its stdout goes to that file, as `> file` sends it. */
function timed(label, command, args, env, out) {
  const fd = out ? openSync(out, 'w') : 'ignore';
  const started = performance.now();
  const result = spawnSync(command, args, {
    env: { PATH: process.env.PATH, HOME: dir, ...env },
    stdio: ['ignore', fd, 'pipe'],
    maxBuffer: 64 * 2 ** 20,
  });
  const seconds = (performance.now() - started) / 1000;
  if (typeof fd === 'number') closeSync(fd);
  if (result.status !== 0) throw new Error(`${label} failed: ${result.stderr}`);
  return { seconds, bytes: out ? statSync(out).size : 0 };
}

const duckdbScript = `const d = require(${JSON.stringify(join(root, 'node_modules/@duckdb/node-api'))});
(async () => { const i = await d.DuckDBInstance.create(':memory:'); const c = await i.connect();
await c.run(${JSON.stringify(`COPY (${sql}) TO '${join(dir, 'duckdb.csv')}' (HEADER)`)}); })();`;
const baseline = timed('duckdb', process.execPath, ['-e', duckdbScript], {});
const baselineBytes = statSync(join(dir, 'duckdb.csv')).size;
console.log(
  `DuckDB COPY TO csv, whole process: ${baseline.seconds.toFixed(2)} s (${(baselineBytes / 2 ** 20).toFixed(0)} MB)`,
);

const home = join(dir, 'home');
const local = timed(
  'lake local',
  process.execPath,
  [join(root, 'bin/lake.js'), 'query', sql, '--output', 'csv'],
  { LAKE_HOME: home },
  join(dir, 'local.csv'),
);
// The same bytes as DuckDB's file: lake prints a number, a date or a string as DuckDB does here.
if (local.bytes !== baselineBytes) console.log(`note: lake wrote ${local.bytes} bytes, DuckDB ${baselineBytes}`);
console.log(
  `lake query --output csv > file, local: ${local.seconds.toFixed(2)} s; ratio ${(local.seconds / baseline.seconds).toFixed(2)} (target <= 1.5)`,
);

const server = await startServe({ LAKE_HOME: home });
try {
  const token = readFileSync(join(home, 'owner.token'), 'utf8').trim();
  const remote = timed(
    'lake remote',
    process.execPath,
    [join(root, 'bin/lake.js'), 'query', sql, '--output', 'csv'],
    { LAKE_BASE_URL: server.url, LAKE_TOKEN: token },
    join(dir, 'remote.csv'),
  );
  console.log(
    `lake query --output csv > file, against lake serve: ${remote.seconds.toFixed(2)} s; ratio ${(remote.seconds / baseline.seconds).toFixed(2)} (target <= 1.5)`,
  );
} finally {
  await server.stop();
}
