#!/usr/bin/env node
// A MariaDB cdc table's sync from the binary log against its full copy, measured in one run (not a timed test): a
// MariaDB server of the bench's own (binary log on, row format) holds a table; its first cdc sync copies it whole
// (a `lake sync start` process in local mode), then 1% of its rows change and the next sync applies them from the
// log. The ratio is the change sync's time to the copy's, as medians: the copy made three times and the change sync
// five times, each from one saved home.
// Usage: node bench/sync-mysql-binlog.mjs [rows]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMysqlSourceArgs } from './mysql.mjs';

const rows = Number(process.argv[2] ?? 2_000_000);
const CHANGE_SYNCS = 5;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const lake = fileURLToPath(new URL('../bin/lake.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'lake-bench-binlog-'));
const env = { ...process.env, LAKE_HOME: join(work, 'home'), LAKE_CONFIG_DIR: join(work, 'config') };
const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port: free } = probe.address();
    probe.close(() => resolve(free));
  });
});

const data = join(work, 'mariadb');
execFileSync('mariadb-install-db', [
  '--no-defaults',
  `--datadir=${data}`,
  '--user=root',
  '--auth-root-authentication-method=normal',
  '--skip-test-db',
]);
const server = spawn(
  'mariadbd',
  [
    '--no-defaults',
    '--user=root',
    `--datadir=${data}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${join(work, 'socket')}`,
    `--log-bin=${join(data, 'binlog')}`,
    '--binlog-format=ROW',
    '--server-id=1',
    '--innodb-buffer-pool-size=512M',
  ],
  { stdio: 'ignore' },
);
const sql = (statements, db = '') =>
  execFileSync(
    'mariadb',
    ['-h', '127.0.0.1', '-P', String(port), '-u', 'root', ...(db ? [db] : []), '-e', statements],
    {
      maxBuffer: 1 << 30,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
const seconds = (started) => (performance.now() - started) / 1000;
const run = (...args) => {
  const started = performance.now();
  const profile =
    process.env.BENCH_PROFILE && args[0] === 'sync'
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
      : [];
  const result = spawnSync(process.execPath, [...profile, lake, ...args], { env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`lake ${args.join(' ')}: ${result.stderr}`);
  return { stdout: result.stdout, stderr: result.stderr, seconds: seconds(started) };
};

try {
  for (let tries = 0; ; tries++) {
    try {
      sql('SELECT 1');
      break;
    } catch (error) {
      if (tries > 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  let started = performance.now();
  sql('CREATE DATABASE shop');
  sql(
    `CREATE TABLE shop.events (id bigint PRIMARY KEY, account_id int NOT NULL, kind varchar(10) NOT NULL, amount decimal(12,2), note text, updated_at datetime(3) NOT NULL);
     INSERT INTO shop.events SELECT seq, seq % 10000, ELT(1 + seq % 4, 'view', 'click', 'buy', 'share'), (seq % 100000) / 100.0, MD5(seq), '2024-01-01' + INTERVAL seq SECOND FROM seq_1_to_${rows};`,
    'shop',
  );
  console.log(`setup: ${rows.toLocaleString('en-US')} rows in ${seconds(started).toFixed(1)} s`);
  const source = JSON.parse(
    run(...createMysqlSourceArgs('shop', { host: '127.0.0.1', port, database: 'shop' })).stdout,
  ).id;
  run('sources', 'update', source, '--cdc', 'shop.events');
  // The copy three times and the change sync five times, each from one saved home (a single run swung by a fifth):
  // the copy starts from the home as the source was made, and the change sync from the home after the copy, so each
  // reads the same 1% of the binary log again.
  const saved = (name) => join(work, name);
  const restore = (from) => {
    rmSync(env.LAKE_HOME, { recursive: true, force: true });
    cpSync(from, env.LAKE_HOME, { recursive: true });
  };
  cpSync(env.LAKE_HOME, saved('home-before-copy'), { recursive: true });
  const copies = [];
  for (let i = 0; i < 3; i++) {
    if (i > 0) restore(saved('home-before-copy'));
    const copy = run('sync', 'start', source, '--json');
    if (JSON.parse(copy.stdout).status !== 'succeeded') throw new Error(copy.stdout);
    copies.push(copy.seconds);
  }
  console.log(
    `first cdc sync (the table copied whole), three times: ${copies.map((t) => t.toFixed(2)).join(', ')} s; median ${median(copies).toFixed(2)} s`,
  );
  cpSync(env.LAKE_HOME, saved('home-after-copy'), { recursive: true });

  sql(`UPDATE shop.events SET note = 'changed', amount = amount + 1 WHERE id % 100 = 0`);
  const changeSeconds = [];
  let changes;
  for (let i = 0; i < CHANGE_SYNCS; i++) {
    if (i > 0) restore(saved('home-after-copy'));
    changes = run('sync', 'start', source, '--json');
    if (process.env.LAKE_DEBUG_TIMING) process.stderr.write(changes.stderr ?? '');
    const result = JSON.parse(changes.stdout);
    if (result.status !== 'succeeded') throw new Error(changes.stdout);
    changeSeconds.push(changes.seconds);
  }
  const check = JSON.parse(
    run('query', "select count(*) as n, count(*) filter (where note = 'changed') as c from lake.shop.events", '--json')
      .stdout,
  );
  console.log(
    `cdc sync of ${(rows / 100).toLocaleString('en-US')} changed rows (1%) from the binary log, ${CHANGE_SYNCS} times from one state: ${changeSeconds.map((t) => t.toFixed(2)).join(', ')} s; median ${median(changeSeconds).toFixed(2)} s, ratio to the median copy ${(median(changeSeconds) / median(copies)).toFixed(3)} (target <= 0.10); lake rows ${JSON.stringify(check[0] ?? check)}`,
  );
} finally {
  server.kill('SIGKILL');
  await new Promise((resolve) => server.once('exit', resolve));
  rmSync(work, { recursive: true, force: true });
}
