import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { inMemory, type Harness } from '../helpers/transports.js';
import { submit, type Json } from '../helpers/queries.js';
import { openSandbox } from '../../src/service/engine/sandbox.js';
import { InstancePool } from '../../src/service/engine/instance-pool.js';

const CANARY_TEXT = 'canary-7f3a9c-secret';

describe('sandbox battery: escape attempts are refused and touch no file outside the lake', () => {
  let api: Harness;
  let outside: string;
  let canary: string;
  let canaryParquet: string;
  beforeAll(async () => {
    api = await inMemory.start();
    outside = tempDir('lake-outside');
    canary = join(outside, 'secret.csv');
    writeFileSync(canary, `secret\n${CANARY_TEXT}\n`);
    canaryParquet = join(outside, 'secret.parquet');
    writeFileSync(canaryParquet, 'not really parquet');
  });
  afterAll(async () => {
    await api.close();
  });

  const out = (name: string): string => join(outside, name);
  const attempts = (): [string, string, string][] => [
    // [description, sql, expected code]
    ['read_csv of a file', `select * from read_csv('${canary}')`, 'forbidden_function'],
    ['read_csv_auto', `select * from read_csv_auto('${canary}')`, 'forbidden_function'],
    ['read_text', `select * from read_text('${canary}')`, 'forbidden_function'],
    ['read_blob', `select * from read_blob('${canary}')`, 'forbidden_function'],
    ['read_json', `select * from read_json('${canary}')`, 'forbidden_function'],
    ['read_parquet', `select * from read_parquet('${canaryParquet}')`, 'forbidden_function'],
    ['parquet_scan', `select * from parquet_scan('${canaryParquet}')`, 'forbidden_function'],
    ['parquet_metadata', `select * from parquet_metadata('${canaryParquet}')`, 'forbidden_function'],
    ['glob of a directory', `select * from glob('${outside}/*')`, 'forbidden_function'],
    ['replacement scan by path', `select * from '${canary}'`, 'forbidden_function'],
    ['replacement scan in a join', `select * from lake.demo.orders o, '${canary}' s`, 'forbidden_function'],
    ['replacement scan by quoted identifier', `select * from "${canary}"`, 'forbidden_function'],
    ['replacement scan in a scalar subquery', `select (select count(*) from '${canary}') as n`, 'forbidden_function'],
    ['COPY TO outside', `COPY (select 1) TO '${out('copy.csv')}'`, 'write_not_allowed'],
    ['COPY table TO', `copy lake.demo.orders to '${out('orders.csv')}'`, 'write_not_allowed'],
    ['COPY FROM', `copy x from '${canary}'`, 'write_not_allowed'],
    ['EXPORT DATABASE', `export database '${out('export')}'`, 'write_not_allowed'],
    ['IMPORT DATABASE', `import database '${outside}'`, 'write_not_allowed'],
    ['ATTACH a new database', `attach '${out('new.duckdb')}' as x`, 'write_not_allowed'],
    ['DETACH the lake', 'detach lake', 'write_not_allowed'],
    ['INSTALL an extension', 'install httpfs', 'write_not_allowed'],
    ['FORCE INSTALL', 'force install httpfs', 'write_not_allowed'],
    ['LOAD an extension', 'load httpfs', 'write_not_allowed'],
    ['PRAGMA', 'pragma enable_profiling', 'write_not_allowed'],
    ['SET external access', 'set enable_external_access = true', 'write_not_allowed'],
    ['RESET', 'reset allowed_directories', 'write_not_allowed'],
    ['unlock configuration', 'set lock_configuration = false', 'write_not_allowed'],
    ['CREATE TABLE AS', 'create table t as select 1', 'write_not_allowed'],
    ['CREATE MACRO', 'create macro m(x) as x', 'write_not_allowed'],
    ['DROP VIEW in the lake', 'drop view lake.demo.orders', 'write_not_allowed'],
    ['INSERT in a CTE', 'with x as (select 1) insert into t select * from x', 'write_not_allowed'],
    ['CALL', 'call pragma_version()', 'write_not_allowed'],
    ['CHECKPOINT', 'checkpoint', 'write_not_allowed'],
    ['VACUUM', 'vacuum', 'write_not_allowed'],
    ['BEGIN', 'begin transaction', 'write_not_allowed'],
    ['USE another catalog', 'use memory', 'write_not_allowed'],
    ['EXPLAIN ANALYZE of a write', 'explain analyze delete from lake.demo.orders', 'write_not_allowed'],
    ['second statement after a comment', "select 1 /* x */; copy (select 1) to '/tmp/x.csv'", 'multiple_statements'],
    [
      'second statement hidden after a line comment',
      `select 1 -- note\n; drop view lake.demo.orders`,
      'multiple_statements',
    ],
    ['mixed case', `sElEcT * FrOm ReAd_CsV('${canary}')`, 'forbidden_function'],
    ['quoted function name', `select * from "read_csv"('${canary}')`, 'forbidden_function'],
    ['comment between name and call', `select * from read_csv/* hi */('${canary}')`, 'forbidden_function'],
    ['name inside a dollar-quoted literal', 'select $tag$read_csv$tag$ as x', 'forbidden_function'],
    ['name inside an E-string', "select e'read_\\'csv' as x, read_csv('x')", 'forbidden_function'],
    [
      'nested block comment hiding a call',
      `/* /* */ select * from read_csv('${canary}') */ select 1`,
      'forbidden_function',
    ],
    ['full-width unicode letters', `select * from ｒｅａｄ＿ｃｓｖ('${canary}')`, 'forbidden_function'],
    ['query() runs text as SQL', `select * from query('select * from lake.demo.orders')`, 'forbidden_function'],
    ['query_table() by name', `select * from query_table('orders')`, 'forbidden_function'],
    ['current_setting reveals paths', "select current_setting('allowed_directories')", 'forbidden_function'],
    ['duckdb_settings()', 'select * from duckdb_settings()', 'forbidden_function'],
    ['duckdb_databases() reveals paths', 'select * from duckdb_databases()', 'forbidden_function'],
    ['getenv', "select getenv('HOME')", 'forbidden_function'],
    [
      'SQL assembled from strings',
      `select * from json_execute_serialized_sql(json_serialize_sql('select * from rea' || 'd_csv(''${canary}'')'))`,
      'forbidden_function',
    ],
    ['sqlite_scan', `select * from sqlite_scan('${canary}', 't')`, 'forbidden_function'],
    ['file URI', `select 'file://${canary}' as u`, 'forbidden_function'],
    ['s3 URI', "select * from lake.demo.orders where status = 's3://bucket/key'", 'forbidden_function'],
    ['gs URI in a comment', 'select 1 -- gs://bucket/key', 'forbidden_function'],
    // Review findings: each passed the checks before execution (the engine sandbox stopped or answered them).
    ['parquet_full_metadata', `select * from parquet_full_metadata('${canaryParquet}')`, 'forbidden_function'],
    [
      'a table function the guard does not know by name',
      `select * from parquet_file_metadata('${canaryParquet}')`,
      'forbidden_function',
    ],
    ['replacement scan with a query suffix', `select * from '${canary}?a'`, 'forbidden_function'],
    ['replacement scan of a bare file name with a suffix', "select * from 'x.csv?a'", 'forbidden_function'],
    ['histogram of a table named in a string', "select * from histogram('demo.orders', amount)", 'forbidden_function'],
    ['duckdb_views() shows view SQL with server paths', 'select sql from duckdb_views()', 'forbidden_function'],
    [
      'information_schema.views shows view SQL',
      'select view_definition from information_schema.views',
      'forbidden_function',
    ],
    ['sqlite_master shows view SQL', 'select sql from sqlite_master', 'forbidden_function'],
    ['pg_get_viewdef', 'select pg_get_viewdef(1)', 'forbidden_function'],
  ];

  it('has at least 30 attempts', () => {
    expect(attempts().length).toBeGreaterThanOrEqual(30);
  });

  it('refuses every attempt with its code before execution', async () => {
    const results: string[] = [];
    for (const [description, sql, code] of attempts()) {
      const response = await submit(api, sql);
      const body = (await response.json()) as Json;
      results.push(`${response.status} ${body.error?.code ?? body.status} ${description}`);
      expect({ description, status: response.status, code: body.error?.code }).toEqual({
        description,
        status: 400,
        code,
      });
      expect(JSON.stringify(body)).not.toContain(CANARY_TEXT);
    }
    expect(results).toHaveLength(attempts().length);
  });

  it('left no file behind outside the lake and read none', () => {
    expect(readdirSync(outside).sort()).toEqual(['secret.csv', 'secret.parquet']);
    expect(existsSync('/tmp/x.csv')).toBe(false);
  });

  it('the engine sandbox holds on its own, with no guard in front of it', async () => {
    const layout = api.services.lake.layout;
    const organizationId = api.home.organization.id;
    const resultDir = layout.resultDir(organizationId, 'qr_battery');
    mkdirSync(resultDir, { recursive: true });
    const sandbox = await openSandbox({
      catalogFile: (await api.services.lake.catalogFile(organizationId)).file,
      readableDirs: [layout.tablesDir(organizationId)],
      writableDir: resultDir,
      pool: new InstancePool({ memoryLimit: '256MB', threads: 1 }),
    });
    const refused = async (sql: string): Promise<string> => {
      const error = await sandbox.connection.run(sql).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(error, sql).toBeInstanceOf(Error);
      expect(error?.message).not.toContain(CANARY_TEXT);
      return error?.message ?? '';
    };
    try {
      expect(await refused(`select * from read_csv('${canary}')`)).toMatch(/Permission|disabled/i);
      expect(await refused(`copy (select 1) to '${out('engine.csv')}'`)).toMatch(/Permission|disabled/i);
      expect(await refused(`attach '${out('engine.duckdb')}' as x`)).toMatch(/Permission|disabled/i);
      expect(await refused('set enable_external_access = true')).toMatch(/lock|cannot change/i);
      expect(await refused('set lock_configuration = false')).toMatch(/lock/i);
      expect(await refused('drop view lake.demo.orders')).toMatch(/read-only/i);
      expect(await refused('create table lake.demo.x as select 1')).toMatch(/read-only/i);
      expect(await refused('install httpfs')).toBeTruthy();
      // What it may do: read lake tables through the catalog.
      const rows = await sandbox.connection.runAndReadAll('select count(*) from demo.orders');
      expect(Number(rows.getRows()[0]?.[0])).toBe(5000);
    } finally {
      sandbox.close();
    }
    expect(readdirSync(outside).sort()).toEqual(['secret.csv', 'secret.parquet']);
  });
});
