#!/usr/bin/env node
// A MariaDB source's sync against the raw read of the same tables, measured in one run (not a timed test): a full
// sync of three tables as a whole `lake sync start` process in local mode, against `mariadb --quick` selecting
// every row of them in one consistent transaction into /dev/null; then a 1% change of the largest synced
// incrementally (that table alone). This machine's speed swings by a fifth within minutes, so the raw read and the
// full sync are also run three times each, alternately (each full sync into a home of its own), and their medians
// compared.
// Usage: node bench/sync-mysql.mjs [rows of the largest table]   (LAKE_TEST_MYSQL_URL: the server, root by default)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMysqlSourceArgs } from './mysql.mjs';

const rows = Number(process.argv[2] ?? 2_000_000);
const server = new URL(process.env.LAKE_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test');
const lake = fileURLToPath(new URL('../bin/lake.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'lake-bench-mysql-'));
const env = { ...process.env, LAKE_HOME: join(work, 'home'), LAKE_CONFIG_DIR: join(work, 'config') };
const database = `lake_bench_mysql_${process.pid}`;
const client = [
  '-h',
  server.hostname,
  '-P',
  server.port || '3306',
  '-u',
  decodeURIComponent(server.username || 'root'),
];

const sql = (statements, db = '') =>
  execFileSync('mariadb', [...client, ...(db ? [db] : []), '-e', statements], { maxBuffer: 1 << 30 });
const seconds = (started) => (performance.now() - started) / 1000;
const run = (...args) => runIn(env, ...args);
const runIn = (env, ...args) => {
  const started = performance.now();
  // /usr/bin/time reports the process's peak resident memory (kB) on stderr's last line.
  const result = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, lake, ...args], { env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`lake ${args.join(' ')}: ${result.stderr}`);
  const peakKb = Number(result.stderr.trim().split('\n').at(-1));
  return { stdout: result.stdout, seconds: seconds(started), peakMb: peakKb / 1024 };
};

sql(`CREATE DATABASE ${database} CHARACTER SET utf8mb4`);
try {
  let started = performance.now();
  sql(
    `CREATE TABLE events (id bigint PRIMARY KEY, account_id int NOT NULL, kind varchar(10) NOT NULL, amount decimal(12,2), note text, updated_at datetime(3) NOT NULL);
     INSERT INTO events SELECT seq, seq % 10000, ELT(1 + seq % 4, 'view', 'click', 'buy', 'share'), (seq % 100000) / 100.0, MD5(seq), '2024-01-01' + INTERVAL seq SECOND FROM seq_1_to_${rows};
     CREATE INDEX events_updated ON events (updated_at);
     CREATE TABLE accounts (id int PRIMARY KEY, name varchar(40) NOT NULL, plan enum('free','team','business'), created date);
     INSERT INTO accounts SELECT seq, CONCAT('account ', seq), ELT(1 + seq % 3, 'free', 'team', 'business'), '2020-01-01' + INTERVAL seq % 1000 DAY FROM seq_1_to_${Math.round(rows / 10)};
     CREATE TABLE rates (day date PRIMARY KEY, rate double NOT NULL);
     INSERT INTO rates SELECT '2000-01-01' + INTERVAL seq DAY, seq / 7 FROM seq_0_to_9999;
     ANALYZE TABLE events, accounts, rates;`,
    database,
  );
  console.log(
    `setup: ${rows.toLocaleString('en-US')} + ${Math.round(rows / 10).toLocaleString('en-US')} + 10,000 rows in ${seconds(started).toFixed(1)} s`,
  );

  const rawRead = () => {
    const begun = performance.now();
    execFileSync(
      'mariadb',
      [
        ...client,
        '--quick',
        database,
        '-e',
        'START TRANSACTION WITH CONSISTENT SNAPSHOT; SELECT * FROM events; SELECT * FROM accounts; SELECT * FROM rates; COMMIT',
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    return seconds(begun);
  };
  const createSource = (env) => {
    const id = JSON.parse(
      runIn(
        env,
        ...createMysqlSourceArgs('shop', {
          host: server.hostname,
          port: server.port || 3306,
          database,
          user: decodeURIComponent(server.username || 'root'),
        }),
      ).stdout,
    ).id;
    runIn(env, 'sources', 'update', id, '--incremental', `${database}.events:updated_at`);
    return id;
  };
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

  const raw = rawRead();
  console.log(`raw read (mariadb --quick, one transaction, to /dev/null): ${raw.toFixed(2)} s`);
  const source = createSource(env);
  const full = run('sync', 'start', source, '--json');
  if (JSON.parse(full.stdout).status !== 'succeeded') throw new Error(full.stdout);
  console.log(
    `full sync: ${full.seconds.toFixed(2)} s; ratio to the raw read ${(full.seconds / raw).toFixed(2)} (target <= 1.5); peak RSS ${full.peakMb.toFixed(0)} MB (target < 400)`,
  );
  // Twice more each, alternately; the extra full syncs go into homes of their own, removed after.
  const raws = [raw];
  const fulls = [full.seconds];
  for (let i = 1; i <= 2; i++) {
    raws.push(rawRead());
    const other = { ...env, LAKE_HOME: join(work, `home-${i}`) };
    const again = runIn(other, 'sync', 'start', createSource(other), '--json');
    if (JSON.parse(again.stdout).status !== 'succeeded') throw new Error(again.stdout);
    fulls.push(again.seconds);
    rmSync(other.LAKE_HOME, { recursive: true, force: true });
  }
  console.log(
    `three runs each, alternately: raw ${raws.map((t) => t.toFixed(2)).join(', ')} s, full ${fulls.map((t) => t.toFixed(2)).join(', ')} s; ratio of the medians ${(median(fulls) / median(raws)).toFixed(2)} (target <= 1.5)`,
  );

  sql(
    `UPDATE events SET note = 'changed', updated_at = '2030-01-01' + INTERVAL id SECOND WHERE id % 100 = 0`,
    database,
  );
  // The update leaves old row versions for InnoDB's purge thread, which competes with the sync for this machine's
  // two cores right after it: the sync is timed once purge has caught up, as autovacuum's counterpart would leave it.
  for (let waited = 0; waited < 60; waited++) {
    const history = sql("SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'");
    if (!(Number(history.toString().split('\n')[1]) > 100)) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // The changed table alone, as bench/sync-incremental.mjs syncs its one table.
  const incremental = run('sync', 'start', source, '--tables', `${database}.events`, '--json');
  const result = JSON.parse(incremental.stdout);
  if (result.status !== 'succeeded') throw new Error(incremental.stdout);
  const check = JSON.parse(
    run('query', "select count(*) as n, count(*) filter (where note = 'changed') as c from lake.shop.events", '--json')
      .stdout,
  );
  console.log(
    `incremental sync of ${(rows / 100).toLocaleString('en-US')} changed rows (1%): ${incremental.seconds.toFixed(2)} s; ratio to the full sync ${(incremental.seconds / full.seconds).toFixed(3)}, to the median full sync ${(incremental.seconds / median(fulls)).toFixed(3)} (target <= 0.10); lake rows ${JSON.stringify(check[0] ?? check)}`,
  );
} finally {
  sql(`DROP DATABASE IF EXISTS ${database}`);
  rmSync(work, { recursive: true, force: true });
}
