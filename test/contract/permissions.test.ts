import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/service/auth/scopes.js';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { expectError, finished, run, submit, submitOk, type Json } from '../helpers/queries.js';

describe.each(TRANSPORTS)('table permissions over $name', (transport) => {
  let api: Harness;
  let org: string;
  let member: string;
  let memberUserId: string;
  const scopes: Scope[] = ['query:read', 'data:read'];

  beforeAll(async () => {
    api = await transport.start();
    org = api.home.organization.id;
    await api.services.lake.writeTable(
      org,
      'hr',
      'salaries',
      "select 'Zebulon Quux' as employee_fullname, 987654 as annual_salary_eur",
    );
    await api.services.lake.createView(org, 'reports', 'pay', 'select employee_fullname from lake.hr.salaries');
    await api.services.lake.createView(
      org,
      'reports',
      'orders_by_status',
      'select status, count(*) as n from lake.demo.orders group by status',
    );
    const user = await api.home.directory.createUser(org, 'Member', 'member');
    memberUserId = user.id;
    member = (
      await api.home.credentials.issue({ kind: 'pat', organizationId: org, userId: user.id, name: 'm', scopes })
    ).secret;
  });
  afterAll(async () => {
    await api.close();
  });

  const json = async (path: string, token: string): Promise<Json> =>
    (await (await api.request(path, { token })).json()) as Json;

  it('are off by default: everyone in the organization reads everything', async () => {
    expect(await api.services.permissions.enabled(org)).toBe(false);
    expect((await json('/catalog', member)).data.map((s: Json) => s.name)).toEqual(['demo', 'hr', 'reports']);
    expect(
      (
        await finished(
          api,
          ((await (await submit(api, 'select count(*) as n from hr.salaries', { token: member })).json()) as Json).id,
          '&format=inline',
        )
      ).status,
    ).toBe('succeeded');
  });

  it('a service key gets 403 service_key_permissions_off while they are off, on query and catalog endpoints', async () => {
    const key = (
      await api.home.credentials.issue({ kind: 'service_key', organizationId: org, userId: null, name: 'k', scopes })
    ).secret;
    await expectError(await api.request('/catalog', { token: key }), 403, 'service_key_permissions_off');
    await expectError(await api.request('/catalog/demo/orders', { token: key }), 403, 'service_key_permissions_off');
    await expectError(await submit(api, 'select 1', { token: key }), 403, 'service_key_permissions_off');
    const mine = await submitOk(api, 'select 1');
    await expectError(await api.request(`/queries/${mine.id}`, { token: key }), 403, 'service_key_permissions_off');
  });

  describe('when on', () => {
    beforeAll(async () => {
      await api.services.permissions.setEnabled(org, true);
      await api.services.permissions.grant(org, 'demo', 'orders', 'user', memberUserId);
      await api.services.permissions.grant(org, 'reports', 'pay', 'user', memberUserId);
      await api.services.permissions.grant(org, 'reports', 'orders_by_status', 'user', memberUserId);
    });

    it('the catalog shows only granted tables, and views only when every table under them is granted', async () => {
      expect((await json('/catalog', member)).data).toEqual([
        expect.objectContaining({ name: 'demo', table_count: 1, view_count: 0 }),
        expect.objectContaining({ name: 'reports', table_count: 0, view_count: 1 }),
      ]);
      expect((await json('/catalog/demo', member)).data.map((t: Json) => t.name)).toEqual(['orders']);
      expect((await json('/catalog/reports', member)).data.map((t: Json) => t.name)).toEqual(['orders_by_status']);
      await expectError(await api.request('/catalog/demo/customers', { token: member }), 404, 'catalog_not_found');
      await expectError(await api.request('/catalog/hr', { token: member }), 404, 'catalog_not_found');
      await expectError(await api.request('/catalog/reports/pay', { token: member }), 404, 'catalog_not_found');
    });

    it('queries of granted tables and views run', async () => {
      expect((await run(api, 'select count(*) as n from lake.demo.orders')).data).toEqual([{ n: 5000 }]);
      const body = await finished(
        api,
        (
          (await (
            await submit(api, 'select sum(n) as n from reports.orders_by_status', { token: member })
          ).json()) as Json
        ).id,
        '&format=inline',
      );
      expect(body).toMatchObject({ status: 'succeeded', data: [{ n: '5000' }] });
    });

    it('a forbidden table is refused before it runs, directly, through a view, a CTE, a subquery or a join, and the message names it', async () => {
      const cases: [string, string][] = [
        ['select * from lake.demo.customers', 'lake.demo.customers'],
        ['select * from demo.customers', 'demo.customers'],
        ['select * from DEMO.Customers', 'DEMO.Customers'],
        ['select * from reports.pay', 'reports.pay'],
        ['with c as (select * from lake.demo.customers) select * from c', 'lake.demo.customers'],
        [
          'select * from lake.demo.orders where customer_id in (select customer_id from lake.hr.salaries)',
          'lake.hr.salaries',
        ],
        ['select * from lake.demo.orders o join lake.demo.order_items i using (order_id)', 'lake.demo.order_items'],
        ['select * from customers', 'customers'],
        ['select * from lake.demo.no_such_table', 'lake.demo.no_such_table'],
      ];
      for (const [sql, named] of cases) {
        const error = await expectError(await submit(api, sql, { token: member }), 403, 'grant_table_denied');
        expect(error.message, sql).toContain(named);
        // It names what the query wrote, never what lies beneath a view.
        expect(error.message).not.toMatch(
          /employee_fullname|Zebulon|hr\.salaries/.test(sql)
            ? /employee_fullname|Zebulon/
            : /salaries|employee_fullname|Zebulon/,
        );
      }
      // A CTE named like a hidden table is just a CTE.
      expect(
        (
          await finished(
            api,
            (
              (await (
                await submit(api, 'with customers as (select 1 as x) select * from customers', { token: member })
              ).json()) as Json
            ).id,
            '&format=inline',
          )
        ).data,
      ).toEqual([{ x: 1 }]);
    });

    it('listing tables through SQL is refused with grant_introspection_denied', async () => {
      for (const sql of [
        'select * from information_schema.tables',
        'select table_name from information_schema.columns',
        'select * from duckdb_tables()',
        'select * from duckdb_columns()',
        'show tables',
        'SHOW ALL TABLES;',
        'show schemas',
        'show databases',
        'describe',
        'select * from (show tables)',
        'select * from pg_catalog.pg_tables',
        'select * from sqlite_master',
        "select * from pragma_table_info('lake.demo.orders')",
      ]) {
        await expectError(await submit(api, sql, { token: member }), 403, 'grant_introspection_denied');
      }
    });

    it('DESCRIBE and SUMMARIZE of a granted table or view run; of a hidden one they are grant_table_denied', async () => {
      const rows = async (sql: string): Promise<Json[]> => {
        const body = await finished(
          api,
          ((await (await submit(api, sql, { token: member })).json()) as Json).id,
          '&format=inline',
        );
        expect(body.status, sql).toBe('succeeded');
        return body.data as Json[];
      };
      expect((await rows('describe lake.demo.orders')).map((r) => r.column_name)).toEqual([
        'order_id',
        'customer_id',
        'ordered_at',
        'status',
        'total',
      ]);
      expect((await rows('DESC demo.orders')).length).toBe(5);
      expect((await rows('show demo.orders')).length).toBe(5);
      expect((await rows('describe reports.orders_by_status')).map((r) => r.column_name)).toEqual(['status', 'n']);
      expect((await rows('summarize demo.orders')).find((r) => r.column_name === 'order_id')).toMatchObject({
        count: 5000,
      });
      for (const sql of [
        'describe lake.demo.customers',
        'summarize hr.salaries',
        'describe reports.pay',
        'describe select * from demo.orders join demo.customers using (customer_id)',
      ]) {
        await expectError(await submit(api, sql, { token: member }), 403, 'grant_table_denied');
      }
    });

    it('grants to a whole schema, a role and a credential work; owners are never restricted', async () => {
      const other = await api.home.directory.createUser(org, 'Other', 'member');
      const token = (
        await api.home.credentials.issue({ kind: 'pat', organizationId: org, userId: other.id, name: 'o', scopes })
      ).secret;
      await expectError(await api.request('/catalog/demo', { token }), 404, 'catalog_not_found');
      await api.services.permissions.grant(org, 'demo', '*', 'user', other.id);
      expect((await json('/catalog/demo', token)).data).toHaveLength(3);

      const admin = await api.home.directory.createUser(org, 'Admin', 'admin');
      const adminToken = (
        await api.home.credentials.issue({ kind: 'pat', organizationId: org, userId: admin.id, name: 'a', scopes })
      ).secret;
      await expectError(await api.request('/catalog/hr', { token: adminToken }), 404, 'catalog_not_found');
      await api.services.permissions.grant(org, 'hr', 'salaries', 'role', 'admin');
      expect((await json('/catalog/hr', adminToken)).data).toHaveLength(1);

      const key = await api.home.credentials.issue({
        kind: 'service_key',
        organizationId: org,
        userId: null,
        name: 'etl',
        scopes,
      });
      await expectError(
        await api.request('/catalog/demo/order_items', { token: key.secret }),
        404,
        'catalog_not_found',
      );
      await api.services.permissions.grant(org, 'demo', 'order_items', 'credential', key.record.id);
      expect((await json('/catalog/demo/order_items', key.secret)).name).toBe('order_items');
      expect((await json('/catalog', key.secret)).data.map((s: Json) => s.name)).toEqual(['demo']);

      expect((await json('/catalog', api.home.ownerToken)).data.map((s: Json) => s.name)).toEqual([
        'demo',
        'hr',
        'reports',
      ]);
    });

    it('switching them off and on again applies to the very next request (read with its credential)', async () => {
      await api.services.permissions.setEnabled(org, false);
      expect((await json('/catalog', member)).data.map((s: Json) => s.name)).toEqual(['demo', 'hr', 'reports']);
      await api.services.permissions.setEnabled(org, true);
      await expectError(await submit(api, 'select * from hr.salaries', { token: member }), 403, 'grant_table_denied');
      expect((await json('/catalog', member)).data.map((s: Json) => s.name)).toEqual(['demo', 'reports']);
    });

    it('a request decides by the switch read with its credential only for a moment; later it reads it again', async () => {
      const principal = {
        kind: 'user' as const,
        organizationId: org,
        userId: memberUserId,
        credentialId: 'x',
        credentialKind: 'pat' as const,
        scopes,
      };
      // Read as off a moment ago (the credential's read): that is what this request decides by.
      const fresh = { ...principal, tablePermissions: { enabled: false, readAtMs: Date.now() } };
      expect((await api.services.permissions.accessFor(fresh)).restricted).toBe(false);
      // Read long ago (a stream's principal): the store says on.
      const stale = { ...principal, tablePermissions: { enabled: false, readAtMs: Date.now() - 5000 } };
      expect((await api.services.permissions.accessFor(stale)).restricted).toBe(true);
    });

    it('the engine session of a restricted principal holds only the tables it may read', async () => {
      const access = await api.services.permissions.accessFor({
        kind: 'user',
        organizationId: org,
        userId: memberUserId,
        credentialId: 'x',
        credentialKind: 'pat',
        scopes,
      });
      const { tables } = await api.services.lake.catalogFile(org, access);
      expect(tables.map((t) => `${t.schema}.${t.name}`)).toEqual(['demo.orders']);
    });
  });
});
