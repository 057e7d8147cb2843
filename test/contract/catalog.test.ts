import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { expectError, run, type Json } from '../helpers/queries.js';

describe.each(TRANSPORTS)('catalog over $name', (transport) => {
  let api: Harness;
  let org: string;
  beforeAll(async () => {
    api = await transport.start();
    org = api.home.organization.id;
    await api.services.lake.writeTable(org, 'odd.name/x', 'a b', 'select 1 as "the id", \'x\' as label');
    await api.services.lake.createView(
      org,
      'reports',
      'big_orders',
      'select o.order_id, c.name, o.total from lake.demo.orders o join demo.customers c using (customer_id) where o.total > 40',
    );
  });
  afterAll(async () => {
    await api.close();
  });

  const get = async (path: string, token?: string): Promise<Json> => {
    const response = await api.request(path, { token });
    const body = (await response.json()) as Json;
    expect(response.status, JSON.stringify(body)).toBe(200);
    return body;
  };

  it('GET /catalog lists schema objects', async () => {
    const body = await get('/catalog');
    expect(body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(body.data.map((s: Json) => s.name)).toEqual(['demo', 'odd.name/x', 'reports']);
    expect(body.data[0]).toEqual({
      object: 'schema',
      name: 'demo',
      qualified_name: 'lake.demo',
      table_count: 3,
      view_count: 0,
      updated: expect.any(Number),
    });
    expect(body.data[2]).toMatchObject({ name: 'reports', table_count: 0, view_count: 1 });
  });

  it('GET /catalog/{schema} lists tables and views with kind, size and freshness', async () => {
    const demo = await get('/catalog/demo');
    expect(demo.data.map((t: Json) => t.name)).toEqual(['customers', 'order_items', 'orders']);
    expect(demo.data[2]).toEqual({
      object: 'table_summary',
      kind: 'table',
      schema: 'demo',
      name: 'orders',
      qualified_name: 'lake.demo.orders',
      column_count: 5,
      row_count: 5000,
      bytes: expect.any(Number),
      updated: expect.any(Number),
    });
    const reports = await get('/catalog/reports');
    expect(reports.data).toEqual([
      expect.objectContaining({ kind: 'view', name: 'big_orders', row_count: null, bytes: null, column_count: 3 }),
    ]);
  });

  it('GET /catalog/{schema}/{table} describes ordered columns with types and nullability', async () => {
    const orders = await get('/catalog/demo/orders');
    expect(orders).toMatchObject({
      object: 'table',
      kind: 'table',
      schema: 'demo',
      name: 'orders',
      qualified_name: 'lake.demo.orders',
      row_count: 5000,
    });
    expect(orders.columns).toEqual([
      { name: 'order_id', type: 'BIGINT', nullable: false },
      { name: 'customer_id', type: 'INTEGER', nullable: false },
      { name: 'ordered_at', type: 'TIMESTAMP', nullable: false },
      { name: 'status', type: 'VARCHAR', nullable: false },
      { name: 'total', type: 'DECIMAL(12,2)', nullable: false },
    ]);
    const view = await get('/catalog/reports/big_orders');
    expect(view).toMatchObject({
      kind: 'view',
      qualified_name: 'lake.reports.big_orders',
      sql: expect.stringContaining('o.total > 40'),
    });
    expect(view.columns.map((c: Json) => `${c.name} ${c.type}`)).toEqual([
      'order_id BIGINT',
      'name VARCHAR',
      'total DECIMAL(12,2)',
    ]);
  });

  it('takes schema and table names with dots, spaces and slashes as one encoded segment each', async () => {
    const table = await get(`/catalog/${encodeURIComponent('odd.name/x')}/${encodeURIComponent('a b')}`);
    expect(table).toMatchObject({ schema: 'odd.name/x', name: 'a b', qualified_name: 'lake.odd.name/x.a b' });
    expect(table.columns).toEqual([
      { name: 'the id', type: 'INTEGER', nullable: true },
      { name: 'label', type: 'VARCHAR', nullable: true },
    ]);
    expect((await get(`/catalog/${encodeURIComponent('odd.name/x')}`)).data[0].name).toBe('a b');
  });

  it('views are queryable like tables', async () => {
    const body = await run(api, 'select count(*) as n from lake.reports.big_orders');
    const expected = await run(api, 'select count(*) as n from lake.demo.orders where total > 40');
    expect(body.data).toEqual(expected.data);
  });

  it('404 catalog_not_found for missing schemas and tables, in the envelope', async () => {
    await expectError(await api.request('/catalog/nope'), 404, 'catalog_not_found');
    await expectError(await api.request('/catalog/demo/nope'), 404, 'catalog_not_found');
    await expectError(await api.request('/catalog/nope/orders'), 404, 'catalog_not_found');
  });

  it('reads need data:read or query:read', async () => {
    const issue = async (scopes: string[]) =>
      (
        await api.home.credentials.issue({
          kind: 'pat',
          organizationId: org,
          userId: api.home.owner.id,
          name: 's',
          scopes: scopes as never,
        })
      ).secret;
    await expectError(await api.request('/catalog', { token: await issue(['jobs:read']) }), 403, 'missing_scope');
    expect((await api.request('/catalog', { token: await issue(['data:read']) })).status).toBe(200);
    expect((await api.request('/catalog/demo/orders', { token: await issue(['query:read']) })).status).toBe(200);
  });
});
