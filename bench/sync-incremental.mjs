#!/usr/bin/env node
// The cost of an incremental sync against a full sync of the same table, measured in one run (not a timed test):
// a 6M-row table is synced in full, then 1% of its rows change (their cursor column moves on) and an incremental
// sync (cursor + primary-key merge) runs; both as whole `lake sync start` processes in local mode. This machine's
// speed swings by a fifth within minutes, so the ratios are also given as medians: of three full syncs (into homes
// of their own), of the first 1% merge made five times from one state (the source remade from a template, the home
// copied back), and of all eight 1% merges; and the group-by over 8 merges against the compacted table is also read
// alternately, each snapshot by AT (VERSION => …), 11 times each.
// Usage: node bench/sync-incremental.mjs [rows] [changed fraction]
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { admin, createPostgresSourceArgs } from './postgres.mjs';

const rows = Number(process.argv[2] ?? 6_000_000);
const fraction = Number(process.argv[3] ?? 0.01);
const FIRST_MERGES = 5;
const lake = fileURLToPath(new URL('../bin/lake.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'lake-bench-incremental-'));
const env = { ...process.env, LAKE_HOME: join(work, 'home'), LAKE_CONFIG_DIR: join(work, 'config') };
const database = `lake_bench_incremental_${process.pid}`;

// A change to the source, then VACUUM: the first read of rows a bulk UPDATE just wrote sets their hint bits, which
// dirties every page they are on and (after a checkpoint) writes each one to the WAL again. That is PostgreSQL's
// cost, not lake's, and it made the incremental sync's time swing from 0.3 to 1.1 s; the full sync reads rows whose
// hint bits CREATE INDEX already set, so both syncs now read the source as autovacuum would leave it.
const change = async (sql) => {
  await admin(sql, database);
  await admin('VACUUM (ANALYZE) public.events', database);
};

const run = (...args) => runIn(env, ...args);
const runIn = (env, ...args) => {
  const started = performance.now();
  const result = spawnSync(process.execPath, [lake, ...args], { env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`lake ${args.join(' ')}: ${result.stderr}`);
  return { stdout: result.stdout, seconds: (performance.now() - started) / 1000 };
};

await admin(`CREATE DATABASE ${database}`);
try {
  let started = performance.now();
  await admin(
    `CREATE TABLE public.events (id bigint PRIMARY KEY, account_id integer NOT NULL, kind varchar(10) NOT NULL, amount numeric(12,2), note text, updated_at timestamptz NOT NULL);
     INSERT INTO public.events SELECT g, g % 10000, (ARRAY['view','click','buy','share'])[1 + g % 4], (g % 100000) / 100.0, md5(g::text), '2024-01-01'::timestamptz + g * interval '1 millisecond' FROM generate_series(1, ${rows}) g;
     CREATE INDEX events_updated ON public.events (updated_at);
     ANALYZE public.events;`,
    database,
  );
  console.log(`setup: ${rows.toLocaleString('en-US')} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const createSource = (env) => {
    const id = JSON.parse(runIn(env, ...createPostgresSourceArgs('inc', database)).stdout).id;
    runIn(env, 'sources', 'update', id, '--incremental', 'public.events:updated_at');
    return id;
  };
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const source = createSource(env);
  const full = run('sync', 'start', source, '--json');
  if (JSON.parse(full.stdout).status !== 'succeeded') throw new Error(full.stdout);
  // Two more full syncs of the same rows, each into a home of its own (removed after), for the median.
  const fullSeconds = [full.seconds];
  for (let i = 1; i <= 2; i++) {
    const other = { ...env, LAKE_HOME: join(work, `home-${i}`) };
    const again = runIn(other, 'sync', 'start', createSource(other), '--json');
    if (JSON.parse(again.stdout).status !== 'succeeded') throw new Error(again.stdout);
    fullSeconds.push(again.seconds);
    rmSync(other.LAKE_HOME, { recursive: true, force: true });
  }
  const fullMedian = median(fullSeconds);
  console.log(
    `full sync: ${full.seconds.toFixed(2)} s; three runs ${fullSeconds.map((t) => t.toFixed(2)).join(', ')} s, median ${fullMedian.toFixed(2)} s`,
  );
  // What a query pays for layers: the same aggregate over the single-layer table and, below, the layered one.
  const AGGREGATE = 'select kind, count(*) as n, sum(amount) as total from lake.inc.events group by kind order by kind';
  const timeQuery = () => median(Array.from({ length: 5 }, () => run('query', AGGREGATE).seconds));
  const singleLayer = timeQuery();
  const changed = Math.round(rows * fraction);
  const firstChange = `UPDATE public.events SET note = 'changed', updated_at = '2030-01-01'::timestamptz + id * interval '1 millisecond' WHERE id % ${Math.round(1 / fraction)} = 0`;
  // The first merge, measured FIRST_MERGES times from one state: before each, the source database is made again from
  // a template taken after the full sync and the home is copied back, so each run merges the same change into the
  // same files (a single run swung by a fifth).
  const template = `${database}_template`;
  await admin(`CREATE DATABASE ${template} TEMPLATE ${database}`);
  const savedHome = join(work, 'home-after-full-sync');
  cpSync(env.LAKE_HOME, savedHome, { recursive: true });
  const firstMerges = [];
  let incremental;
  try {
    for (let i = 0; i < FIRST_MERGES; i++) {
      if (i > 0) {
        await admin(`DROP DATABASE ${database} WITH (FORCE)`);
        await admin(`CREATE DATABASE ${database} TEMPLATE ${template}`);
        rmSync(env.LAKE_HOME, { recursive: true, force: true });
        cpSync(savedHome, env.LAKE_HOME, { recursive: true });
      }
      await change(firstChange);
      incremental = run('sync', 'start', source, '--json');
      const result = JSON.parse(incremental.stdout);
      if (result.status !== 'succeeded') throw new Error(incremental.stdout);
      firstMerges.push(incremental.seconds);
    }
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    rmSync(savedHome, { recursive: true, force: true });
  }
  const check = JSON.parse(
    run('query', "select count(*) as n, count(*) filter (where note = 'changed') as c from lake.inc.events", '--json')
      .stdout,
  );
  console.log(
    `incremental sync of ${changed.toLocaleString('en-US')} changed rows (${(fraction * 100).toFixed(1)}%), the last of the first merges below: ${incremental.seconds.toFixed(2)} s; ratio to the first full sync ${(incremental.seconds / full.seconds).toFixed(3)} (target <= 0.10); lake rows ${JSON.stringify(check.data?.[0] ?? check)}`,
  );
  console.log(
    `the same first merge ${FIRST_MERGES} times from one state: ${firstMerges.map((t) => t.toFixed(2)).join(', ')} s; median ${median(firstMerges).toFixed(2)} s, ratio to the median full sync ${(median(firstMerges) / fullMedian).toFixed(3)} (target <= 0.10)`,
  );
  const mergeSeconds = [incremental.seconds];
  const layered = timeQuery();
  console.log(
    `a group-by over the table as a whole process: ${(singleLayer * 1000).toFixed(0)} ms after the full sync, ${(layered * 1000).toFixed(0)} ms with one merge; ratio ${(layered / singleLayer).toFixed(2)}`,
  );
  // Seven more merges (8 on top of the full write, the most before compaction), each of another 1% of the rows.
  for (let merge = 2; merge <= 8; merge++) {
    await change(
      `UPDATE public.events SET note = 'changed ${merge}', updated_at = '2031-01-01'::timestamptz + ${merge} * interval '1 day' + id * interval '1 millisecond' WHERE id % ${Math.round(1 / fraction)} = ${merge}`,
    );
    const merged = run('sync', 'start', source, '--json');
    if (JSON.parse(merged.stdout).status !== 'succeeded') throw new Error('merge');
    mergeSeconds.push(merged.seconds);
  }
  console.log(
    `the 8 merges of 1%: ${mergeSeconds.map((t) => t.toFixed(2)).join(', ')} s; median ${median(mergeSeconds).toFixed(2)} s, ratio to the median full sync ${(median(mergeSeconds) / fullMedian).toFixed(3)} (target <= 0.10)`,
  );
  const versionNow = () => JSON.parse(run('catalog', 'history', 'inc.events', '--json').stdout).data[0].snapshot_id;
  const eightMergesVersion = versionNow();
  const eightMerges = timeQuery();
  await change(
    `UPDATE public.events SET note = 'compacted', updated_at = '2032-01-01'::timestamptz + id * interval '1 millisecond' WHERE id = 1`,
  );
  // The ninth incremental sync compacts the table: its files rewritten whole, no delete file left.
  if (JSON.parse(run('sync', 'start', source, '--json').stdout).status !== 'succeeded') throw new Error('compaction');
  const compacted = timeQuery();
  console.log(
    `the group-by over a table with 8 merges: ${(eightMerges * 1000).toFixed(0)} ms; after compaction ${(compacted * 1000).toFixed(0)} ms; ratio ${(eightMerges / compacted).toFixed(2)} (target <= 1.3)`,
  );
  // The same two tables read alternately, so a slower minute of the machine falls on both.
  const compactedVersion = versionNow();
  const atVersion = (version) => AGGREGATE.replace('lake.inc.events', `lake.inc.events AT (VERSION => ${version})`);
  const alternate = { merged: [], compacted: [] };
  for (let i = 0; i < 11; i++) {
    alternate.merged.push(run('query', atVersion(eightMergesVersion)).seconds);
    alternate.compacted.push(run('query', atVersion(compactedVersion)).seconds);
  }
  console.log(
    `the same, read alternately by version (11 each): ${(median(alternate.merged) * 1000).toFixed(0)} ms against ${(median(alternate.compacted) * 1000).toFixed(0)} ms; ratio ${(median(alternate.merged) / median(alternate.compacted)).toFixed(2)} (target <= 1.3)`,
  );
  // Delete detection: the same 1% change, a third of it deletes, with the table's keys read and compared each sync.
  const third = Math.round(3 / fraction);
  const plainChange = async (tag, remainder) =>
    change(
      `UPDATE public.events SET note = '${tag}', updated_at = '2033-01-01'::timestamptz + ${remainder} * interval '1 day' + id * interval '1 millisecond' WHERE id % ${third} = ${remainder}`,
    );
  await plainChange('without detection', 1);
  const withoutDetection = run('sync', 'start', source, '--json');
  run('sources', 'update', source, '--detect-deletes', 'public.events');
  await change(
    `DELETE FROM public.events WHERE id % ${third} = 2; UPDATE public.events SET note = 'detected', updated_at = '2034-01-01'::timestamptz + id * interval '1 millisecond' WHERE id % ${third} IN (3, 4)`,
  );
  const withDetection = run('sync', 'start', source, '--json');
  const detected = JSON.parse(withDetection.stdout);
  const deleted = detected.tables?.find((t) => t.table === 'public.events')?.deleted;
  if (detected.status !== 'succeeded' || deleted !== Math.round(rows / third)) throw new Error(withDetection.stdout);
  console.log(
    `an incremental sync detecting deletes (${deleted.toLocaleString('en-US')} deleted, ${(2 * deleted).toLocaleString('en-US')} updated): ${withDetection.seconds.toFixed(2)} s; ratio to the full sync ${(withDetection.seconds / full.seconds).toFixed(3)}; ${withoutDetection.seconds.toFixed(2)} s for ${(rows / third).toLocaleString('en-US')} updates without detection`,
  );
} finally {
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  rmSync(work, { recursive: true, force: true });
}
