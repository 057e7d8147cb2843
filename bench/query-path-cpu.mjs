#!/usr/bin/env node
// Where a small query's CPU goes (not a timed test): one lake serve on PostgreSQL or SQLite metadata, 8 clients
// running 400 'select 1' queries (submit and long poll), CPU per process kind read from /proc before and after.
// Usage: node bench/query-path-cpu.mjs postgres|sqlite
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startServe } from './serve-process.mjs';
const admin = async (sql) => {
  const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await c.connect();
  await c.query(sql);
  await c.end();
};
const kind = process.argv[2] ?? 'postgres';
const dir = mkdtempSync(join(tmpdir(), 'cpu-'));
let env, token, db;
const quiet = { LAKE_QUERY_WORKERS: '2', LAKE_RATE_LIMIT_PER_CALLER: '1000000', LAKE_RATE_LIMIT_PER_ORG: '1000000' };
if (kind === 'postgres') {
  db = `lake_cpu_${randomBytes(3).toString('hex')}`;
  await admin(`CREATE DATABASE ${db}`);
  const url = `postgres://postgres@127.0.0.1:5432/${db}`;
  for (const n of ['signing.key', 'secrets.key'])
    writeFileSync(join(dir, n), randomBytes(32).toString('hex'), { mode: 0o600 });
  const shared = {
    ...quiet,
    LAKE_METADATA_URL: url,
    LAKE_DATA_DIR: join(dir, 'data'),
    LAKE_SIGNING_KEY_FILE: join(dir, 'signing.key'),
    LAKE_SECRETS_KEY_FILE: join(dir, 'secrets.key'),
  };
  token = JSON.parse(
    execFileSync(
      process.execPath,
      [fileURLToPath(new URL('../bin/lake.js', import.meta.url)), 'init', '--json', '--metadata-url', url],
      { env: { PATH: process.env.PATH, ...shared, LAKE_HOME: join(dir, 'admin') } },
    ).toString(),
  ).token.secret;
  env = { ...shared, LAKE_HOME: join(dir, 'home') };
} else {
  token = JSON.parse(
    execFileSync(process.execPath, [fileURLToPath(new URL('../bin/lake.js', import.meta.url)), 'init', '--json'], {
      env: { PATH: process.env.PATH, LAKE_HOME: join(dir, 'home') },
    }).toString(),
  ).token.secret;
  env = { ...quiet, LAKE_HOME: join(dir, 'home') };
}
const server = await startServe(env);
const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
const q = async () => {
  const s = await (
    await fetch(`${server.url}/queries`, { method: 'POST', headers, body: JSON.stringify({ sql: 'select 1 as one' }) })
  ).json();
  let b;
  do b = await (await fetch(`${server.url}/queries/${s.id}?wait=10&format=inline`, { headers })).json();
  while (b.status === 'queued' || b.status === 'running');
};
const cpu = () => {
  const m = new Map();
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const t = (Number(f[11]) + Number(f[12])) / 100;
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const name =
        comm === 'postgres'
          ? 'postgres'
          : cmd.includes('query-worker')
            ? 'worker'
            : cmd.includes('serve')
              ? 'serve'
              : comm;
      m.set(p, [name, t]);
    } catch {}
  }
  return m;
};
for (let i = 0; i < 40; i++) await q();
const before = cpu();
const t0 = performance.now();
let n = 0;
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (n++ < 400) await q();
  }),
);
const secs = (performance.now() - t0) / 1000;
const after = cpu();
const by = new Map();
for (const [p, [name, t]] of after) {
  const b = before.get(p)?.[1] ?? 0;
  by.set(name, (by.get(name) ?? 0) + t - b);
}
console.log(kind, (400 / secs).toFixed(1), 'q/s', secs.toFixed(2), 's');
for (const [name, t] of [...by].sort((a, b) => b[1] - a[1]).slice(0, 6)) console.log('  ', name, t.toFixed(2), 's cpu');
// one at a time latency
const lat = [];
for (let i = 0; i < 30; i++) {
  const s = performance.now();
  await q();
  lat.push(performance.now() - s);
}
lat.sort((a, b) => a - b);
console.log('  sequential median ms', lat[15].toFixed(1));
await server.stop();
if (db) await admin(`DROP DATABASE ${db} WITH (FORCE)`);
