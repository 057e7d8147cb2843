#!/usr/bin/env node
// Small-query throughput through `lake serve` replicas, each store measured in the same run (not a timed test):
//   A. one replica on SQLite (the embedded default), B. one replica on PostgreSQL, C. three replicas on one
//   PostgreSQL store, clients spread over them. On a 2-core machine C shows what coordination costs, not a
//   speed-up (the replicas share the cores). Optionally D: the SQLite replica of another build (LAKE_BENCH_BASE,
//   a checkout of the commit before the store change, built), interleaved with A so noise hits both alike.
// Usage: [LAKE_BENCH_BASE=dir] [LAKE_BENCH_SETUPS=A,D,B,C] node bench/replicas.mjs [queries-per-round] [rounds]
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startServe } from './serve-process.mjs';

const perRound = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 3);
const root = fileURLToPath(new URL('..', import.meta.url));
const adminUrl = process.env.LAKE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const base = process.env.LAKE_BENCH_BASE;
// Limits high enough never to refuse, but counted: on PostgreSQL every request pays its shared budget's round trip.
const quiet = { LAKE_RATE_LIMIT_PER_CALLER: '1000000', LAKE_RATE_LIMIT_PER_ORG: '1000000', LAKE_QUERY_WORKERS: '2' };
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function admin(sql) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function lake(bin, args, env) {
  return execFileSync(process.execPath, [join(bin, 'bin/lake.js'), ...args], {
    env: { PATH: process.env.PATH, ...env },
  }).toString();
}

/** A fresh home (and for PostgreSQL a fresh database and keys); returns the token and each replica's environment. */
async function prepare(kind, replicas, bin = root) {
  const dir = mkdtempSync(join(tmpdir(), 'lake-bench-replicas-'));
  if (kind === 'sqlite') {
    const home = join(dir, 'home');
    const token = JSON.parse(lake(bin, ['init', '--json'], { LAKE_HOME: home })).token.secret;
    return {
      token,
      envs: [{ ...quiet, LAKE_HOME: home }],
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const database = `lake_bench_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${database}`);
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  for (const name of ['signing.key', 'secrets.key'])
    writeFileSync(join(dir, name), randomBytes(32).toString('hex'), { mode: 0o600 });
  const shared = {
    ...quiet,
    LAKE_METADATA_URL: url.toString(),
    LAKE_DATA_DIR: join(dir, 'data'),
    LAKE_SIGNING_KEY_FILE: join(dir, 'signing.key'),
    LAKE_SECRETS_KEY_FILE: join(dir, 'secrets.key'),
  };
  const token = JSON.parse(
    lake(bin, ['init', '--json', '--metadata-url', url.toString()], { ...shared, LAKE_HOME: join(dir, 'admin') }),
  ).token.secret;
  const envs = Array.from({ length: replicas }, (_, i) => ({ ...shared, LAKE_HOME: join(dir, `home${i}`) }));
  return {
    token,
    envs,
    drop: async () => {
      await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database}'`);
      await admin(`DROP DATABASE IF EXISTS ${database}`);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function smallQuery(url, token) {
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  const submitted = await (
    await fetch(`${url}/queries`, { method: 'POST', headers, body: JSON.stringify({ sql: 'select 1 as one' }) })
  ).json();
  let body;
  do body = await (await fetch(`${url}/queries/${submitted.id}?wait=10&format=inline`, { headers })).json();
  while (body.status === 'queued' || body.status === 'running');
  if (body.status !== 'succeeded') throw new Error(JSON.stringify(body));
}

/** Queries a second: 8 clients, each query sent to the next replica in turn. */
async function throughput(urls, token, total) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let n = next++; n < total; n = next++) await smallQuery(urls[n % urls.length], token);
    }),
  );
  return total / ((performance.now() - started) / 1000);
}

async function setup(name, kind, replicas, bin) {
  const prepared = await prepare(kind, replicas, bin);
  const servers = [];
  for (const env of prepared.envs) servers.push(await startServe(env, bin));
  const urls = servers.map((s) => s.url);
  await throughput(urls, prepared.token, 40);
  return {
    name,
    rates: [],
    run: async () => throughput(urls, prepared.token, perRound),
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop()));
      await prepared.drop();
    },
  };
}

// LAKE_BENCH_SETUPS=A,D measures only those (A always comes first: the ratios are to it).
const only = process.env.LAKE_BENCH_SETUPS?.split(',');
const wanted = (letter) => letter === 'A' || !only || only.includes(letter);
const setups = [
  await setup('A. SQLite, 1 replica', 'sqlite', 1),
  ...(base && wanted('D') ? [await setup('D. SQLite, 1 replica, base build', 'sqlite', 1, base)] : []),
  ...(wanted('B') ? [await setup('B. PostgreSQL, 1 replica', 'postgres', 1)] : []),
  ...(wanted('C') ? [await setup('C. PostgreSQL, 3 replicas', 'postgres', 3)] : []),
];
// Each round starts with the next setup: the one after the three-replica round would otherwise always meet
// PostgreSQL's after-work (its checkpoints, autovacuum) on the shared cores.
for (let round = 0; round < rounds; round++) {
  for (let i = 0; i < setups.length; i++) {
    const s = setups[(round + i) % setups.length];
    s.rates.push(await s.run());
  }
}
for (const s of setups) await s.stop();
const [a] = setups;
for (const s of setups) {
  console.log(
    `${s.name}: ${median(s.rates).toFixed(1)} queries/s (rounds ${s.rates.map((r) => r.toFixed(0)).join(', ')}); ratio to A ${(median(s.rates) / median(a.rates)).toFixed(2)}`,
  );
}
