#!/usr/bin/env node
// A multi-table sync against the raw speed of the same PostgreSQL server, measured in one run (not a timed test).
// Six related tables (5.66M rows; bigint, integer, char(n), varchar, numeric, date, text), shaped like an analytic
// schema. Baseline: `COPY <table> TO STDOUT` of every table, one after another, in one REPEATABLE READ session, read
// and discarded. Measured: `lake sync start` (local mode, whole process, into committed zstd Parquet) for
// sync_connections 1, 2 and 3, with the process's peak RSS.
// Usage: node bench/sync-tables.mjs [scale]   (scale 1 = 5.66M rows; LAKE_TEST_PG_URL names the server)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { admin, copyAndDiscard, createPostgresSourceArgs, databaseUrl, pg } from './postgres.mjs';

const scale = Number(process.argv[2] ?? 1);
const lake = fileURLToPath(new URL('../bin/lake.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'lake-bench-tables-'));
const env = { ...process.env, LAKE_HOME: join(work, 'home'), LAKE_CONFIG_DIR: join(work, 'config') };
const database = `lake_bench_tables_${process.pid}`;
const n = (rows) => Math.round(rows * scale);

const TABLES = {
  supplier: `CREATE TABLE supplier (s_suppkey integer PRIMARY KEY, s_name char(25), s_address varchar(40), s_nationkey integer, s_phone char(15), s_acctbal numeric(15,2), s_comment varchar(101));
    INSERT INTO supplier SELECT g, 'Supplier#' || lpad(g::text, 9, '0'), md5(g::text), g % 25, '27-' || (100 + g % 900) || '-' || (1000 + g % 9000), (g % 1000000) / 100.0 - 999, repeat(md5((g * 7)::text), 2) FROM generate_series(1, ${n(10000)}) g`,
  part: `CREATE TABLE part (p_partkey integer PRIMARY KEY, p_name varchar(55), p_mfgr char(25), p_brand char(10), p_type varchar(25), p_size integer, p_container char(10), p_retailprice numeric(15,2), p_comment varchar(23));
    INSERT INTO part SELECT g, md5(g::text) || ' part', 'Manufacturer#' || (1 + g % 5), 'Brand#' || (11 + g % 44), (ARRAY['STANDARD ANODIZED TIN','SMALL PLATED BRASS','PROMO BURNISHED COPPER','ECONOMY BRUSHED STEEL'])[1 + g % 4], 1 + g % 50, (ARRAY['SM CASE','LG BOX','MED PACK','JUMBO JAR'])[1 + g % 4], 900 + (g % 20000) / 100.0, left(md5(g::text), 20) FROM generate_series(1, ${n(200000)}) g`,
  partsupp: `CREATE TABLE partsupp (ps_partkey integer, ps_suppkey integer, ps_availqty integer, ps_supplycost numeric(15,2), ps_comment varchar(199), PRIMARY KEY (ps_partkey, ps_suppkey));
    INSERT INTO partsupp SELECT 1 + g / 4, 1 + (g * 13) % ${n(10000)}, g % 9999, (g % 100000) / 100.0, repeat(md5(g::text), 3) FROM generate_series(0, ${n(800000) - 1}) g`,
  customer: `CREATE TABLE customer (c_custkey integer PRIMARY KEY, c_name varchar(25), c_address varchar(40), c_nationkey integer, c_phone char(15), c_acctbal numeric(15,2), c_mktsegment char(10), c_comment varchar(117));
    INSERT INTO customer SELECT g, 'Customer#' || lpad(g::text, 9, '0'), md5(g::text), g % 25, '13-' || (100 + g % 900) || '-' || (1000 + g % 9000), (g % 1000000) / 100.0 - 999, (ARRAY['AUTOMOBILE','BUILDING','FURNITURE','MACHINERY','HOUSEHOLD'])[1 + g % 5], repeat(md5(g::text), 2) FROM generate_series(1, ${n(150000)}) g`,
  orders: `CREATE TABLE orders (o_orderkey bigint PRIMARY KEY, o_custkey integer, o_orderstatus char(1), o_totalprice numeric(15,2), o_orderdate date, o_orderpriority char(15), o_clerk char(15), o_shippriority integer, o_comment varchar(79));
    INSERT INTO orders SELECT g, 1 + g % ${n(150000)}, (ARRAY['O','F','P'])[1 + g % 3], (g % 50000000) / 100.0, date '1992-01-01' + (g % 2400), (ARRAY['1-URGENT','2-HIGH','3-MEDIUM','4-NOT SPECIFIED','5-LOW'])[1 + g % 5], 'Clerk#' || lpad((g % 1000)::text, 9, '0'), 0, md5(g::text) FROM generate_series(1, ${n(1500000)}) g`,
  lineitem: `CREATE TABLE lineitem (l_orderkey bigint, l_linenumber integer, l_partkey integer, l_suppkey integer, l_quantity numeric(15,2), l_extendedprice numeric(15,2), l_discount numeric(15,2), l_tax numeric(15,2), l_returnflag char(1), l_linestatus char(1), l_shipdate date, l_commitdate date, l_receiptdate date, l_shipinstruct char(25), l_shipmode char(10), l_comment varchar(44), PRIMARY KEY (l_orderkey, l_linenumber));
    INSERT INTO lineitem SELECT 1 + g / 2, 1 + g % 2, 1 + g % ${n(200000)}, 1 + g % ${n(10000)}, 1 + g % 50, (g % 10000000) / 100.0, (g % 11) / 100.0, (g % 9) / 100.0, (ARRAY['A','N','R'])[1 + g % 3], (ARRAY['O','F'])[1 + g % 2], date '1992-01-02' + (g % 2500), date '1992-01-31' + (g % 2500), date '1992-01-03' + (g % 2530), (ARRAY['DELIVER IN PERSON','COLLECT COD','NONE','TAKE BACK RETURN'])[1 + g % 4], (ARRAY['TRUCK','MAIL','SHIP','AIR','RAIL'])[1 + g % 5], left(md5(g::text), 30) FROM generate_series(0, ${n(3000000)} - 1) g`,
};

await admin(`CREATE DATABASE ${database}`);
try {
  let started = performance.now();
  for (const sql of Object.values(TABLES)) await admin(sql, database);
  await admin('ANALYZE', database);
  const total = Number(
    (
      await admin(
        `SELECT ${Object.keys(TABLES)
          .map((t) => `(SELECT count(*) FROM ${t})`)
          .join(' + ')} AS n`,
        database,
      )
    ).rows[0].n,
  );
  console.log(
    `setup: ${Object.keys(TABLES).length} tables, ${total.toLocaleString('en-US')} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  // Baseline: every table's COPY, one after another, in one snapshot, read and discarded.
  const client = new pg.Client({ connectionString: databaseUrl(database) });
  await client.connect();
  started = performance.now();
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
  for (const table of Object.keys(TABLES)) await copyAndDiscard(client, `COPY ${table} TO STDOUT WITH (FORMAT csv)`);
  await client.query('COMMIT');
  const rawSeconds = (performance.now() - started) / 1000;
  await client.end();
  console.log(
    `raw sequential COPY TO STDOUT of the ${Object.keys(TABLES).length} tables: ${rawSeconds.toFixed(2)} s, ${Math.round(total / rawSeconds).toLocaleString('en-US')} rows/s`,
  );

  const run = (...args) => {
    const result = spawnSync(process.execPath, [lake, ...args], { env, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`lake ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  for (const connections of [1, 2, 3]) {
    const name = `bench${connections}`;
    const source = JSON.parse(
      run(...createPostgresSourceArgs(name, database), '--config', `sync_connections=${connections}`),
    ).id;
    const timed = spawnSync(
      '/usr/bin/time',
      ['-f', '%M %e', process.execPath, lake, 'sync', 'start', source, '--json'],
      { env, encoding: 'utf8' },
    );
    if (timed.status !== 0) throw new Error(timed.stderr);
    const [peakKb, wallSeconds] = timed.stderr.trim().split('\n').at(-1).split(' ').map(Number);
    const synced = JSON.parse(timed.stdout);
    if (synced.status !== 'succeeded' || synced.rows !== total)
      throw new Error(`sync did not complete: ${timed.stdout.slice(0, 500)}`);
    console.log(
      `lake sync start, sync_connections=${connections}: ${wallSeconds.toFixed(2)} s, ${Math.round(total / wallSeconds).toLocaleString('en-US')} rows/s; ratio to raw sequential COPY ${(wallSeconds / rawSeconds).toFixed(2)} (target <= 1.2); peak RSS ${(peakKb / 1024).toFixed(0)} MB (target < 400 MB)`,
    );
  }
} finally {
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  rmSync(work, { recursive: true, force: true });
}
