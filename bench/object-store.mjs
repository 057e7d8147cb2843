#!/usr/bin/env node
// The lake on an object store against the lake in a local directory, measured in one run (not a timed test):
//   a full sync of the same PostgreSQL table (local mode, whole process) into each, as a ratio;
//   the same group-by query (whole process) on each: the object store's with a cold cache (with the bytes
//   fetched) and with a warm one, as ratios to the local directory's.
// The object store is s3rver (the tests' S3-compatible server) on 127.0.0.1, its objects on this disk.
// Usage: node bench/object-store.mjs [rows]   (LAKE_TEST_PG_URL names the server; default the local one)
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import S3rver from 's3rver';
import { admin, createPostgresSourceArgs } from './postgres.mjs';

const rows = Number(process.argv[2] ?? 3_000_000);
const lake = fileURLToPath(new URL('../bin/lake.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'lake-bench-s3-'));
const database = `lake_bench_${process.pid}`;
const s3 = new S3rver({
  port: 0,
  address: '127.0.0.1',
  silent: true,
  directory: join(work, 's3'),
  configureBuckets: [{ name: 'lake-bench' }],
});
const { port } = await s3.run();

const base = (name) => ({ ...process.env, LAKE_HOME: join(work, name), LAKE_CONFIG_DIR: join(work, `${name}-config`) });
const objectStore = (name) => ({
  ...base(name),
  LAKE_DATA_URL: `s3://lake-bench/${name}`,
  LAKE_S3_PATH_STYLE: 'true',
  AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`,
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
  AWS_REGION: 'us-east-1',
});
// Asynchronous: the object store answers from this process's event loop.
const run = async (env, ...args) => {
  const started = performance.now();
  const { stdout } = await promisify(execFile)(process.execPath, [lake, ...args], { env, maxBuffer: 64 * 1048576 });
  return { stdout, seconds: (performance.now() - started) / 1000 };
};
const bytesUnder = (dir) => {
  let sum = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) sum += statSync(join(entry.parentPath, entry.name)).size;
  return sum;
};

await admin(`CREATE DATABASE ${database}`);
try {
  await admin(
    `CREATE TABLE public.events (id bigint PRIMARY KEY, account_id integer NOT NULL, kind text NOT NULL, amount numeric(12,2), happened_at timestamptz NOT NULL);
     INSERT INTO public.events SELECT g, g % 10000, (ARRAY['view','click','buy','share'])[1 + g % 4], (g % 100000) / 100.0, '2024-01-01'::timestamptz + g * interval '1 second' FROM generate_series(1, ${rows}) g;
     ANALYZE public.events;`,
    database,
  );
  await admin('VACUUM public.events', database);
  const sync = async (env) => {
    const source = JSON.parse((await run(env, ...createPostgresSourceArgs('bench', database))).stdout);
    const { stdout, seconds } = await run(env, 'sync', 'start', source.id, '--json');
    const synced = JSON.parse(stdout);
    if (synced.status !== 'succeeded' || synced.rows !== rows) throw new Error(`sync did not complete: ${stdout}`);
    return { seconds, schema: source.destination_schema ?? source.lake_schema };
  };
  const local = await sync(base('local'));
  const stored = await sync(objectStore('stored'));
  console.log(
    `full sync of ${rows.toLocaleString('en-US')} rows: local directory ${local.seconds.toFixed(2)} s, object store ${stored.seconds.toFixed(2)} s`,
  );
  console.log(`  ratio ${(stored.seconds / local.seconds).toFixed(3)} (target <= 1.2)`);

  const sql = (schema) =>
    `select kind, count(*) as n, sum(amount) as total, max(happened_at) as last from lake.${schema}.events group by kind order by kind`;
  const best = async (env, schema, times) => {
    let least = Number.POSITIVE_INFINITY;
    for (let i = 0; i < times; i++)
      least = Math.min(least, (await run(env, 'query', sql(schema), '--output', 'csv')).seconds);
    return least;
  };
  const localQuery = await best(base('local'), local.schema, 5);
  // A second process on the stored lake's home with an empty cache folder of its own: cold, then warm.
  const cold = { ...objectStore('stored'), LAKE_CACHE_DIR: join(work, 'cold-cache') };
  const first = (await run(cold, 'query', sql(stored.schema), '--output', 'csv')).seconds;
  const fetched = bytesUnder(join(work, 'cold-cache', 'lake'));
  const warm = await best(cold, stored.schema, 5);
  console.log(
    `group-by over the table (whole process, best of 5): local directory ${(localQuery * 1000).toFixed(0)} ms`,
  );
  console.log(
    `  object store, warm cache: ${(warm * 1000).toFixed(0)} ms, ratio ${(warm / localQuery).toFixed(3)} (target <= 1.1)`,
  );
  console.log(
    `  object store, cold cache: ${(first * 1000).toFixed(0)} ms, ratio ${(first / localQuery).toFixed(3)}, ${(fetched / 1048576).toFixed(1)} MB fetched`,
  );
} finally {
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await s3.close();
  rmSync(work, { recursive: true, force: true });
}
