#!/usr/bin/env node
// Change data capture against a full sync of the same table, in one run (not a timed test), on a PostgreSQL cluster
// the bench starts itself with wal_level=logical (initdb as the postgres user, a free port): a table of `rows` rows
// is copied by the first cdc sync (in the slot's snapshot); then 1% of its rows change (a third each inserts,
// updates, deletes) and the next cdc sync applies them. The baseline for reading the changes is pg_recvlogical
// decoding the same changes with pgoutput into /dev/null, from a slot of its own made at the same point.
// With --latency, it then measures how soon a change is queryable under lake serve with a 1-minute schedule.
// Usage: node bench/sync-cdc.mjs [rows] [changed fraction] [--latency]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pg } from './postgres.mjs';

const numbers = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const rows = Number(numbers[0] ?? 6_000_000);
const fraction = Number(numbers[1] ?? 0.01);
const BIN = '/usr/lib/postgresql/15/bin';
const lake = fileURLToPath(new URL('../bin/lake.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'lake-bench-cdc-'));
const env = { ...process.env, LAKE_HOME: join(work, 'home'), LAKE_CONFIG_DIR: join(work, 'config') };
const asPostgres = (cmd, args) =>
  execFileSync('runuser', ['-u', 'postgres', '--', join(BIN, cmd), ...args], { stdio: 'ignore' });
const freePort = () =>
  new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

const run = (...args) => {
  const started = performance.now();
  const result = spawnSync(process.execPath, [lake, ...args], { env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`lake ${args.join(' ')}: ${result.stderr}`);
  return { stdout: result.stdout, seconds: (performance.now() - started) / 1000 };
};

// The cluster's folder belongs to the postgres user, which initdb and the server run as.
const cluster = mkdtempSync(join(tmpdir(), 'lake-bench-cdc-pg-'));
const port = await freePort();
chownSync(
  cluster,
  Number(execFileSync('id', ['-u', 'postgres']).toString()),
  Number(execFileSync('id', ['-g', 'postgres']).toString()),
);
asPostgres('initdb', ['-D', join(cluster, 'data'), '--auth=trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
asPostgres('pg_ctl', [
  '-D',
  join(cluster, 'data'),
  '-o',
  `-p ${port} -k ${cluster} -c listen_addresses=127.0.0.1 -c wal_level=logical -c max_wal_size=4GB -c fsync=off -c shared_buffers=256MB`,
  '-w',
  '-l',
  join(cluster, 'log'),
  'start',
]);
const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
const sql = async (text) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
};
try {
  let started = performance.now();
  await sql(
    `CREATE TABLE public.events (id bigint PRIMARY KEY, account_id integer NOT NULL, kind varchar(10) NOT NULL, amount numeric(12,2), note text, updated_at timestamptz NOT NULL);
     INSERT INTO public.events SELECT g, g % 10000, (ARRAY['view','click','buy','share'])[1 + g % 4], (g % 100000) / 100.0, md5(g::text), '2024-01-01'::timestamptz + g * interval '1 millisecond' FROM generate_series(1, ${rows}) g;`,
  );
  await sql('VACUUM ANALYZE public.events');
  console.log(`setup: ${rows.toLocaleString('en-US')} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const source = JSON.parse(
    run(
      'sources',
      'create',
      '--connector',
      'postgres',
      '--name',
      'cdc',
      '--config',
      'host=127.0.0.1',
      '--config',
      `port=${port}`,
      '--config',
      'database=postgres',
      '--config',
      'user=postgres',
      '--no-password',
      '--json',
    ).stdout,
  ).id;
  run('sources', 'update', source, '--cdc', 'public.events');
  const full = run('sync', 'start', source, '--json');
  if (JSON.parse(full.stdout).status !== 'succeeded') throw new Error(full.stdout);
  console.log(`first cdc sync (the copy in the slot's snapshot): ${full.seconds.toFixed(2)} s`);
  // The baseline's slot starts where lake's is now: both read the same changes.
  await sql(`SELECT pg_create_logical_replication_slot('bench_recv', 'pgoutput')`);
  const step = Math.round(3 / fraction);
  const changedRows = Math.round(rows * fraction);
  started = performance.now();
  await sql(
    `INSERT INTO public.events SELECT ${rows} + g, g % 10000, 'new', 1, md5(g::text), now() FROM generate_series(1, ${Math.round(changedRows / 3)}) g;
     UPDATE public.events SET note = 'changed', amount = amount + 1 WHERE id % ${step} = 1;
     DELETE FROM public.events WHERE id % ${step} = 2;`,
  );
  await sql('VACUUM public.events');
  const end = (await sql('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
  console.log(
    `changes: ${changedRows.toLocaleString('en-US')} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  const recvStarted = performance.now();
  execFileSync('pg_recvlogical', [
    '-d',
    url,
    '--slot',
    'bench_recv',
    '--start',
    '-o',
    'proto_version=1',
    '-o',
    `publication_names=lake_${source}`,
    '-E',
    end,
    '-f',
    '/dev/null',
    '--no-loop',
  ]);
  const recv = (performance.now() - recvStarted) / 1000;
  await sql(`SELECT pg_drop_replication_slot('bench_recv')`);
  const cdc = run('sync', 'start', source, '--json');
  const result = JSON.parse(cdc.stdout);
  const table = result.tables?.find((t) => t.table === 'public.events');
  if (result.status !== 'succeeded') throw new Error(cdc.stdout);
  const check = JSON.parse(run('query', 'select count(*) as n from lake.cdc.events', '--json').stdout)[0].n;
  const want = Number((await sql('SELECT count(*) AS n FROM public.events')).rows[0].n);
  if (check !== want) throw new Error(`lake has ${check} rows, the source ${want}`);
  console.log(
    `cdc sync of ${JSON.stringify(table.changes)}: ${cdc.seconds.toFixed(2)} s; ratio to the first sync ${(cdc.seconds / full.seconds).toFixed(3)} (target <= 0.05)`,
  );
  console.log(
    `pg_recvlogical reading the same changes to /dev/null: ${recv.toFixed(2)} s; lake's change throughput ÷ pg_recvlogical's ${(recv / cdc.seconds).toFixed(2)} (target >= 0.5)`,
  );
  if (process.argv.includes('--latency')) {
    // Freshness: lake serve runs the source on a 1-minute schedule; a row inserted now must be queryable within the
    // interval and 10 s.
    run('sources', 'update', source, '--schedule', '1m');
    // The bench's cluster is on loopback, which lake serve refuses to reach by default (LAKE_SOURCES_DENY).
    const serve = spawn(process.execPath, [lake, 'serve', '--port', '0'], {
      env: { ...env, LAKE_SOURCES_DENY: '169.254.169.254' },
      stdio: 'ignore',
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await sql(`INSERT INTO public.events VALUES (0, 0, 'fresh', 0, 'fresh', now())`);
      const changedAt = performance.now();
      let seen = false;
      while (!seen && performance.now() - changedAt < 180_000) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        seen =
          JSON.parse(run('query', 'select count(*) as n from lake.cdc.events where id = 0', '--json').stdout)[0].n ===
          1;
      }
      const latency = (performance.now() - changedAt) / 1000;
      console.log(
        `a row inserted at the source was queryable after ${latency.toFixed(1)} s on a 1-minute schedule (target <= 70 s)${seen ? '' : ' — never seen'}`,
      );
    } finally {
      serve.kill('SIGTERM');
    }
  }
} finally {
  try {
    asPostgres('pg_ctl', ['-D', join(cluster, 'data'), '-m', 'immediate', 'stop']);
  } catch {
    // Already stopped.
  }
  rmSync(work, { recursive: true, force: true });
  rmSync(cluster, { recursive: true, force: true });
}
