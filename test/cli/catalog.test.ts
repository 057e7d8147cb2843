import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

describe('lake catalog and the admin commands for views and permissions', () => {
  let env: Record<string, string>;
  beforeAll(() => {
    const root = tempDir('lake-catalog-cli');
    env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
  });
  const lake = (...args: string[]) => runLake(args, { env });

  it('lists schemas and tables as CSV in a pipe and the API objects with --json', async () => {
    const schemas = await lake('catalog', 'ls');
    expect(schemas.code).toBe(0);
    expect(schemas.stdout).toMatch(/^schema,tables,views,updated\ndemo,3,0,\d{4}-\d\d-\d\dT[\d:]+Z\n$/);
    const tables = await lake('catalog', 'ls', 'demo', '--output', 'tsv');
    expect(tables.stdout.split('\n')[0]).toBe('name\tkind\tcolumns\trows\tbytes\tupdated');
    expect(tables.stdout).toMatch(/\norders\ttable\t5\t5000\t\d+\t/);
    const json = JSON.parse((await lake('catalog', 'ls', 'demo', '--json')).stdout);
    expect(json).toMatchObject({
      object: 'list',
      data: [{ name: 'customers' }, { name: 'order_items' }, { name: 'orders' }],
    });
  });

  it('describes a table: columns in order', async () => {
    const described = await lake('catalog', 'describe', 'demo.orders');
    expect(described.stdout).toBe(
      'column,type,nullable\norder_id,BIGINT,false\ncustomer_id,INTEGER,false\nordered_at,TIMESTAMP,false\nstatus,VARCHAR,false\ntotal,"DECIMAL(12,2)",false\n',
    );
    expect((await lake('catalog', 'describe', 'demo', 'orders')).stdout).toBe(described.stdout);
    const missing = await lake('catalog', 'describe', 'demo.nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('catalog_not_found');
    expect((await lake('catalog', 'describe', 'nodot')).code).toBe(2);
  });

  it('operators create and drop views, which the catalog lists and queries read', async () => {
    const created = await lake(
      'admin',
      'view',
      'create',
      'reports.paid',
      '--sql',
      "select order_id, total from lake.demo.orders where status = 'paid'",
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({
      object: 'view',
      qualified_name: 'lake.reports.paid',
      columns: [{ name: 'order_id' }, { name: 'total' }],
    });
    expect((await lake('catalog', 'ls', 'reports')).stdout).toMatch(/\npaid,view,2,,,/);
    expect((await lake('query', 'select count(*) as n from reports.paid')).stdout).toBe('n\n1000\n');

    const refused = await lake(
      'admin',
      'view',
      'create',
      'reports.bad',
      '--sql',
      "select * from read_csv('/etc/passwd')",
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('forbidden_function');
    const notLake = await lake('admin', 'view', 'create', 'reports.bad', '--sql', 'select * from nowhere');
    expect(notLake.code).toBe(2);
    expect((await lake('admin', 'view', 'create', 'reports.paid', '--sql', 'select 1')).stderr).toContain(
      'already exists',
    );

    expect((await lake('admin', 'view', 'drop', 'reports.paid')).code).toBe(0);
    expect((await lake('catalog', 'ls', 'reports')).code).toBe(1);
  });

  it('permissions on, a grant, and a restricted token sees only its table', async () => {
    const user = JSON.parse((await lake('admin', 'user', 'create', '--name', 'Ana', '--json')).stdout) as {
      id: string;
    };
    const token = (
      JSON.parse(
        (await lake('admin', 'pat', 'create', '--user', user.id, '--scopes', 'query:read', '--json')).stdout,
      ) as { secret: string }
    ).secret;
    expect((await lake('admin', 'permissions', 'on')).code).toBe(0);
    expect((await lake('admin', 'grant', 'demo.orders', '--to', `user:${user.id}`)).code).toBe(0);
    expect((await lake('admin', 'grant', 'demo.orders', '--to', 'user:usr_nobody')).code).toBe(2);
    expect((await lake('admin', 'grant', 'demo.orders', '--to', 'team:x')).code).toBe(2);

    const grants = JSON.parse((await lake('admin', 'grants', 'ls', '--json')).stdout);
    expect(grants).toMatchObject({
      table_permissions: true,
      data: [{ schema: 'demo', table: 'orders', grantee: `user:${user.id}` }],
    });

    const asAna = (...args: string[]) => runLake(['--token', token, ...args], { env });
    expect((await asAna('catalog', 'ls', 'demo')).stdout).toMatch(
      /^name,kind,columns,rows,bytes,updated\norders,table,/,
    );
    const denied = await asAna('query', 'select * from demo.customers');
    expect(denied.code).toBe(4);
    expect(denied.stderr).toContain('grant_table_denied');
    expect((await asAna('query', 'select count(*) as n from demo.orders')).stdout).toBe('n\n5000\n');

    expect((await lake('admin', 'revoke', 'demo.orders', '--to', `user:${user.id}`)).code).toBe(0);
    expect((await asAna('catalog', 'ls', 'demo')).code).toBe(1);
    expect((await lake('admin', 'permissions', 'off')).code).toBe(0);
    expect((await asAna('catalog', 'ls', 'demo')).code).toBe(0);
  });

  it('lake admin ducklake prints the read-only ATTACH for a pipe, and the API object with --json', async () => {
    const piped = await lake('admin', 'ducklake');
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toMatch(
      /^ATTACH 'ducklake:sqlite:[^']+\/lake\/org_[a-z0-9]+\/ducklake\.sqlite' AS lake \(READ_ONLY, DATA_PATH '[^']+\/lake\/org_[a-z0-9]+\/tables\/'\);\n$/,
    );
    const json = JSON.parse((await lake('admin', 'ducklake', '--json')).stdout);
    expect(json).toMatchObject({ object: 'ducklake_attach', catalog: 'sqlite', metadata_schema: 'main' });
    expect(`${json.attach};\n`).toBe(piped.stdout);
    expect(existsSync(json.data_path)).toBe(true);
  });
});
