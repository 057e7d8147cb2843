#!/usr/bin/env node
// Query speed against baselines measured in the same run (not a timed test). Usage: node bench/query.mjs [runs]
//  1. `lake query` (local, whole process) vs. a whole-process Node script running the same SQL on DuckDB directly,
//     over the same Parquet files: an aggregate over a 10M-row lake table.
//  2. rows/s paging a 1M-row inline result through `lake serve` (1000-row pages over HTTP).
//  3. a 10M-row format=files result vs. DuckDB's own COPY TO Parquet of the same rows.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const runs = Number(process.argv[2] ?? 7);
const root = fileURLToPath(new URL('..', import.meta.url));
const lake = join(root, 'bin', 'lake.js');
const work = mkdtempSync(join(tmpdir(), 'lake-bench-query-'));
const homeDir = join(work, 'home');
// Paging a million rows takes a thousand requests: the bench turns rate limits off (0), as any operator can.
const env = {
  ...process.env,
  LAKE_HOME: homeDir,
  LAKE_CONFIG_DIR: join(work, 'config'),
  LAKE_RATE_LIMIT_PER_CALLER: '0',
  LAKE_RATE_LIMIT_PER_ORG: '0',
};
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const { openHome } = await import(join(root, 'dist/service/home/home.js'));
const { createServices } = await import(join(root, 'dist/service/assembly/services.js'));
const duckdb = await import('@duckdb/node-api');

// The bench table: 10M rows, written through the lake's own snapshot writer.
const home = await openHome(homeDir);
const services = await createServices(home);
let started = performance.now();
const table = await services.lake.writeTable(
  home.organization.id,
  'bench',
  'events',
  `SELECT range AS id, TIMESTAMP '2024-01-01' + to_seconds(range % 31536000) AS happened_at,
          (['click', 'view', 'buy', 'share'])[1 + range % 4] AS kind, (range % 1000) / 10.0 AS amount, range % 7 = 0 AS flagged
   FROM range(10000000)`,
);
console.log(
  `setup: 10M-row lake table written in ${((performance.now() - started) / 1000).toFixed(1)} s (${(table.snapshot.bytes / 1e6).toFixed(0)} MB)`,
);
const files = table.snapshot.files.map((f) => join(homeDir, f));
await services.close();
await home.close();

// 1. whole process: lake query vs. a direct DuckDB script.
const AGGREGATE =
  'SELECT kind, count(*) AS n, sum(amount) AS total, max(happened_at) AS last FROM lake.bench.events GROUP BY kind ORDER BY kind';
const direct = join(work, 'direct.mjs');
writeFileSync(
  direct,
  // require, not import: the fastest way to load DuckDB's CommonJS package, so the baseline is not handicapped.
  `import { createRequire } from 'node:module';
const { DuckDBInstance } = createRequire(import.meta.url)(${JSON.stringify(join(root, 'node_modules/@duckdb/node-api/lib/index.js'))});
const instance = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
const connection = await instance.connect();
const reader = await connection.runAndReadAll(${JSON.stringify(AGGREGATE.replace('lake.bench.events', `read_parquet(${JSON.stringify(files).replace(/"/g, "'")})`))});
const rows = reader.getRowObjectsJson();
process.stdout.write(Object.keys(rows[0]).join(',') + '\\n' + rows.map((r) => Object.values(r).join(',')).join('\\n') + '\\n');
`,
);
const time = (args) => {
  const t = performance.now();
  const result = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${args.join(' ')}: ${result.stderr}`);
  return performance.now() - t;
};
time([lake, 'query', AGGREGATE]);
time([direct]);
const lakeTimes = [];
const directTimes = [];
for (let i = 0; i < runs; i++) {
  lakeTimes.push(time([lake, 'query', AGGREGATE]));
  directTimes.push(time([direct]));
}
const ratio1 = median(lakeTimes) / median(directTimes);
console.log(
  `1. aggregate over 10M rows, whole process, median of ${runs}: lake query ${median(lakeTimes).toFixed(0)} ms, direct DuckDB ${median(directTimes).toFixed(0)} ms, ratio ${ratio1.toFixed(3)} (target <= 1.15)`,
);

// 2 and 3 run against lake serve.
const server = spawn(process.execPath, [lake, 'serve', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const line = out.split('\n').find((l) => l.includes('"listening"'));
    if (line) resolve(JSON.parse(line).url);
  });
  server.on('exit', () => reject(new Error('lake serve exited')));
});
server.stdout.resume();
const token = (await import('node:fs')).readFileSync(join(homeDir, 'owner.token'), 'utf8').trim();
const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
const api = async (path, init = {}) => {
  const response = await fetch(`${url}${path}`, { ...init, headers });
  const body = await response.json();
  if (!response.ok) throw new Error(JSON.stringify(body));
  return body;
};
const runToEnd = async (sql) => {
  const { id } = await api('/queries', { method: 'POST', body: JSON.stringify({ sql }) });
  for (;;) {
    const query = await api(`/queries/${id}?wait=30`);
    if (query.status !== 'running') return query;
  }
};

const inline = await runToEnd('SELECT * FROM lake.bench.events WHERE id < 1000000');
started = performance.now();
let rows = 0;
let cursor;
do {
  const page = await api(`/queries/${inline.id}?format=inline&limit=1000${cursor ? `&starting_after=${cursor}` : ''}`);
  rows += page.data.length;
  cursor = page.has_more ? page.next_cursor : undefined;
} while (cursor);
const rowsPerSecond = rows / ((performance.now() - started) / 1000);
console.log(
  `2. paging a ${rows.toLocaleString('en-US')}-row inline result through lake serve: ${Math.round(rowsPerSecond).toLocaleString('en-US')} rows/s (target >= 250,000)`,
);

const filesTimes = [];
const copyTimes = [];
const baseline = await (
  await duckdb.DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  })
).connect();
const fileList = `[${files.map((f) => `'${f}'`).join(', ')}]`;
for (let i = 0; i < Math.max(3, Math.floor(runs / 2)); i++) {
  let t = performance.now();
  const query = await runToEnd('SELECT * FROM lake.bench.events');
  if (query.status !== 'succeeded') throw new Error(JSON.stringify(query));
  filesTimes.push(performance.now() - t);
  t = performance.now();
  await baseline.run(
    `COPY (SELECT * FROM read_parquet(${fileList})) TO '${join(work, 'copy.parquet')}' (FORMAT parquet, COMPRESSION zstd)`,
  );
  copyTimes.push(performance.now() - t);
}
const ratio3 = median(filesTimes) / median(copyTimes);
console.log(
  `3. 10M-row format=files result (submit to succeeded, over HTTP): ${median(filesTimes).toFixed(0)} ms vs DuckDB COPY TO Parquet ${median(copyTimes).toFixed(0)} ms, ratio ${ratio3.toFixed(3)} (target <= 1.2)`,
);

server.kill('SIGTERM');
await new Promise((resolve) => server.on('exit', resolve));
rmSync(work, { recursive: true, force: true });
