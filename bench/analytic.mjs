#!/usr/bin/env node
// The query path's cost on an analytic workload (not a timed test). Usage: node bench/analytic.mjs [runs]
// Generates a decision-support schema of 8 related tables (~7.2 M rows, bench/analytic-queries.mjs) through lake's
// own snapshot writer, then times each query as a whole `lake query` process (local mode, CSV to a pipe) against a
// whole-process Node script that runs the same SQL with DuckDB's node API over the same Parquet files (views made
// by the script, rows printed as CSV). Prints each query's median ratio, their geometric mean and the largest, and
// `select 1` in both. Set LAKE_BENCH_ANALYTIC_HOME to a folder to keep the generated lake between runs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QUERIES, TABLES } from './analytic-queries.mjs';

const runs = Number(process.argv[2] ?? 5);
const root = fileURLToPath(new URL('..', import.meta.url));
const lake = join(root, 'bin', 'lake.js');
const kept = process.env.LAKE_BENCH_ANALYTIC_HOME;
const work = kept ?? mkdtempSync(join(tmpdir(), 'lake-bench-analytic-'));
const homeDir = join(work, 'home');
const env = {
  PATH: process.env.PATH,
  HOME: work,
  LAKE_HOME: homeDir,
  LAKE_CONFIG_DIR: join(work, 'config'),
  LAKE_RATE_LIMIT_PER_CALLER: '0',
  LAKE_RATE_LIMIT_PER_ORG: '0',
};
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const filesJson = join(work, 'files.json');

if (!existsSync(filesJson)) {
  const { openHome } = await import(join(root, 'dist/service/home/home.js'));
  const { createServices } = await import(join(root, 'dist/service/assembly/services.js'));
  const home = await openHome(homeDir);
  const services = await createServices(home);
  const files = {};
  let rows = 0;
  const started = performance.now();
  for (const [name, sql] of Object.entries(TABLES)) {
    const table = await services.lake.writeTable(home.organization.id, 'tpch', name, sql);
    files[name] = table.snapshot.files.map((f) => join(homeDir, f));
    rows += table.snapshot.rowCount ?? 0;
  }
  console.log(
    `setup: ${Object.keys(TABLES).length} tables, ${rows.toLocaleString('en-US')} rows written in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  await services.close();
  await home.close();
  writeFileSync(filesJson, JSON.stringify(files));
}
const files = JSON.parse(readFileSync(filesJson, 'utf8'));

// The baseline: DuckDB's node API loaded the fastest way (require), views over the same files, CSV out.
const direct = join(work, 'direct.mjs');
writeFileSync(
  direct,
  `import { createRequire } from 'node:module';
const { DuckDBInstance } = createRequire(import.meta.url)(${JSON.stringify(join(root, 'node_modules/@duckdb/node-api/lib/index.js'))});
const [sql, views] = [process.argv[2], process.argv[3] === 'views'];
const instance = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
const connection = await instance.connect();
if (views) {
  const files = ${JSON.stringify(files)};
  await connection.run('CREATE SCHEMA tpch;' + Object.entries(files).map(([t, f]) => \`CREATE VIEW tpch.\${t} AS SELECT * FROM read_parquet([\${f.map((p) => "'" + p + "'").join(', ')}]);\`).join('\\n'));
}
const reader = await connection.runAndReadAll(sql);
const rows = reader.getRowObjectsJson();
process.stdout.write(reader.columnNames().join(',') + '\\n' + rows.map((r) => Object.values(r).join(',')).join('\\n') + '\\n');
`,
);

const time = (args) => {
  const t = performance.now();
  const result = spawnSync(process.execPath, args, { env, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  if (result.status !== 0) throw new Error(`${args.slice(0, 2).join(' ')}: ${result.stderr}`);
  return { ms: performance.now() - t, lines: result.stdout.trimEnd().split('\n').length };
};

const compare = (sql, views) => {
  time([lake, 'query', sql]);
  time([direct, sql, views]);
  const lakeTimes = [];
  const directTimes = [];
  let lines;
  for (let i = 0; i < runs; i++) {
    const l = time([lake, 'query', sql]);
    const d = time([direct, sql, views]);
    if (l.lines !== d.lines) throw new Error(`lake printed ${l.lines} lines, DuckDB ${d.lines}: ${sql}`);
    lines = l.lines;
    lakeTimes.push(l.ms);
    directTimes.push(d.ms);
  }
  return { lake: median(lakeTimes), direct: median(directTimes), rows: lines - 1 };
};

const one = compare('select 1', 'none');
console.log(
  `select 1, whole process, median of ${runs}: lake ${one.lake.toFixed(0)} ms, DuckDB script ${one.direct.toFixed(0)} ms, ratio ${(one.lake / one.direct).toFixed(3)} (target <= 1.3)`,
);

const ratios = [];
for (const [name, sql] of Object.entries(QUERIES)) {
  const r = compare(sql, 'views');
  const ratio = r.lake / r.direct;
  ratios.push(ratio);
  console.log(
    `${name.padEnd(52)} ${String(r.rows).padStart(5)} rows  lake ${r.lake.toFixed(0).padStart(5)} ms  DuckDB ${r.direct.toFixed(0).padStart(5)} ms  ratio ${ratio.toFixed(3)}`,
  );
}
const geomean = Math.exp(ratios.reduce((s, r) => s + Math.log(r), 0) / ratios.length);
console.log(
  `${ratios.length} analytic queries: geometric mean ratio ${geomean.toFixed(3)} (target <= 1.15), largest ${Math.max(...ratios).toFixed(3)} (target <= 1.3)`,
);
if (!kept) rmSync(work, { recursive: true, force: true });
