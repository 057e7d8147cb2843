#!/usr/bin/env node
// Sync speed against the raw speed of the same PostgreSQL server, measured in one run (not a timed test).
//   rate of `lake sync start` (local mode, whole process) of a 5M-row table, as a ratio to the rate of reading
//   `COPY (SELECT …) TO STDOUT` of the same table and discarding it; and the sync process's peak RSS.
// Usage: node bench/sync.mjs [rows]   (LAKE_TEST_PG_URL names the server; default the local one)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { admin, copyAndDiscard, databaseUrl, pg, sourceConfigArgs } from './postgres.mjs';

const rows = Number(process.argv[2] ?? 5_000_000);
const lake = fileURLToPath(new URL('../bin/lake.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'lake-bench-sync-'));
const env = { ...process.env, LAKE_HOME: join(work, 'home'), LAKE_CONFIG_DIR: join(work, 'config') };
const database = `lake_bench_${process.pid}`;

await admin(`CREATE DATABASE ${database}`);
try {
  let started = performance.now();
  await admin(
    `CREATE TABLE public.events (id bigint PRIMARY KEY, account_id integer NOT NULL, kind text NOT NULL, amount numeric(12,2), happened_at timestamptz NOT NULL);
     INSERT INTO public.events SELECT g, g % 10000, (ARRAY['view','click','buy','share'])[1 + g % 4], (g % 100000) / 100.0, '2024-01-01'::timestamptz + g * interval '1 second' FROM generate_series(1, ${rows}) g;
     ANALYZE public.events;`,
    database,
  );
  console.log(
    `setup: ${rows.toLocaleString('en-US')} rows in PostgreSQL in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  // Baseline: the raw COPY, read and discarded.
  const client = new pg.Client({ connectionString: databaseUrl(database) });
  await client.connect();
  started = performance.now();
  await copyAndDiscard(
    client,
    'COPY (SELECT id, account_id, kind, amount, happened_at FROM public.events) TO STDOUT WITH (FORMAT csv)',
  );
  const rawSeconds = (performance.now() - started) / 1000;
  await client.end();

  const run = (...args) => {
    const result = spawnSync(process.execPath, [lake, ...args], { env, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`lake ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const source = JSON.parse(
    run(
      'sources',
      'create',
      '--connector',
      'postgres',
      '--name',
      'bench',
      ...sourceConfigArgs(database),
      '--no-password',
      '--json',
    ),
  ).id;
  // GNU time reports the sync process's peak RSS.
  const timed = spawnSync('/usr/bin/time', ['-f', '%M %e', process.execPath, lake, 'sync', 'start', source, '--json'], {
    env,
    encoding: 'utf8',
  });
  if (timed.status !== 0) throw new Error(timed.stderr);
  const [peakKb, wallSeconds] = timed.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  const synced = JSON.parse(timed.stdout);
  if (synced.status !== 'succeeded' || synced.rows !== rows) throw new Error(`sync did not complete: ${timed.stdout}`);

  const rawRate = rows / rawSeconds;
  const syncRate = rows / wallSeconds;
  console.log(
    `raw COPY TO STDOUT read and discarded: ${rawSeconds.toFixed(2)} s, ${Math.round(rawRate).toLocaleString('en-US')} rows/s`,
  );
  console.log(
    `lake sync start (whole process, into zstd Parquet, committed): ${wallSeconds.toFixed(2)} s, ${Math.round(syncRate).toLocaleString('en-US')} rows/s`,
  );
  console.log(
    `ratio ${(syncRate / rawRate).toFixed(3)} (target >= 0.6); peak RSS ${(peakKb / 1024).toFixed(0)} MB (target < 400 MB)`,
  );
} finally {
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  rmSync(work, { recursive: true, force: true });
}
