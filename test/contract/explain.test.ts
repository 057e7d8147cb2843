import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, finished, submit, type Json } from '../helpers/queries.js';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';

/** EXPLAIN and EXPLAIN ANALYZE of a SELECT run as the SELECT would: same guard, same grants, same sandbox. */
describe.each(TRANSPORTS)('EXPLAIN over $name', (transport) => {
  let api: Harness;
  let org: string;
  let member: string;
  beforeAll(async () => {
    api = await transport.start();
    org = api.home.organization.id;
    await api.services.lake.writeTable(
      org,
      'hr',
      'salaries',
      "select 'Zebulon Quux' as employee_fullname, 987654 as annual_salary_eur",
    );
    const user = await api.home.directory.createUser(org, 'Member', 'member');
    member = (
      await api.home.credentials.issue({
        kind: 'pat',
        organizationId: org,
        userId: user.id,
        name: 'm',
        scopes: ['query:read'],
      })
    ).secret;
    await api.services.permissions.setEnabled(org, true);
    await api.services.permissions.grant(org, 'demo', 'orders', 'user', user.id);
  });
  afterAll(async () => {
    await api.close();
  });

  const plan = async (sql: string, token?: string): Promise<Json> => {
    const posted = (await (await submit(api, sql, { token })).json()) as Json;
    return finished(api, posted.id, '&format=inline');
  };

  it('EXPLAIN gives the plan as rows (explain_key, explain_value); EXPLAIN ANALYZE runs it and times it', async () => {
    const explained = await plan('explain select status, count(*) from lake.demo.orders group by status;');
    expect(explained.status).toBe('succeeded');
    expect(explained.columns).toEqual(['explain_key', 'explain_value']);
    expect(explained.data[0]).toMatchObject({
      explain_key: 'physical_plan',
      explain_value: expect.stringMatching(/HASH_GROUP_BY/),
    });
    const analyzed = await plan('EXPLAIN ANALYZE select count(*) from lake.demo.orders');
    expect(analyzed.status).toBe('succeeded');
    expect(analyzed.data[0]).toMatchObject({
      explain_key: 'analyzed_plan',
      explain_value: expect.stringMatching(/Total Time/),
    });
    // Plans of lake tables name the files they read: never where they are on the server.
    for (const sql of ['EXPLAIN ANALYZE select * from lake.hr.salaries', 'EXPLAIN select * from lake.hr.salaries']) {
      const text = JSON.stringify((await plan(sql)).data);
      expect(text).toMatch(/salaries|READ_PARQUET|PARQUET_SCAN|TABLE_SCAN/i);
      expect(text).not.toContain(api.home.paths.root);
      expect(text).not.toMatch(/\/tmp\//);
    }
  });

  it('explains only SELECTs, and what the caller may read', async () => {
    await expectError(await submit(api, 'explain delete from lake.demo.orders'), 400, 'write_not_allowed');
    await expectError(await submit(api, "explain select * from read_csv('/etc/passwd')"), 400, 'forbidden_function');
    await expectError(await submit(api, 'explain analyze select 1; select 2'), 400, 'multiple_statements');
    await expectError(await submit(api, 'explain'), 400, 'parameter_invalid');
    await expectError(
      await submit(api, 'explain analyze select * from lake.hr.salaries', { token: member }),
      403,
      'grant_table_denied',
    );
    expect((await plan('explain select count(*) from lake.demo.orders', member)).status).toBe('succeeded');
  });
});
