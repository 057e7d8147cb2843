import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { expectError, finished, submitOk, type Json } from '../helpers/queries.js';

/** Words that only the hidden table (and the other organization's table) contain: none may reach a restricted caller. */
const SECRETS = /payroll_2026|employee_fullname|annual_salary_eur|Zebulon|987654|rival_org_table|rival_secret_column/i;

describe.each(TRANSPORTS)(
  'leak test over $name: a restricted credential learns nothing of hidden tables',
  (transport) => {
    let api: Harness;
    let org: string;
    let restricted: string;
    const seen: string[] = [];

    beforeAll(async () => {
      api = await transport.start();
      org = api.home.organization.id;
      await api.services.lake.writeTable(
        org,
        'hr',
        'payroll_2026',
        "select 'Zebulon Quux' as employee_fullname, 987654 as annual_salary_eur",
      );
      const rival = await api.home.directory.createOrganization('Rival');
      await api.services.lake.writeTable(rival.id, 'rival', 'rival_org_table', 'select 1 as rival_secret_column');
      await api.services.permissions.setEnabled(org, true);
      const user = await api.home.directory.createUser(org, 'Restricted', 'member');
      await api.services.permissions.grant(org, 'demo', 'orders', 'user', user.id);
      restricted = (
        await api.home.credentials.issue({
          kind: 'pat',
          organizationId: org,
          userId: user.id,
          name: 'r',
          scopes: ['query:read', 'data:read', 'jobs:read', 'jobs:manage'],
        })
      ).secret;
    });
    afterAll(async () => {
      await api.close();
    });

    /**
     * Response bodies are kept and scanned at the end, except answers to requests that name a hidden object
     * themselves: those may repeat the caller's own words, and are checked to read exactly like a missing name.
     */
    const ask = async (path: string, init: RequestInit = {}): Promise<Response> => {
      const response = await api.request(path, { ...init, token: restricted });
      const named = SECRETS.test(decodeURIComponent(path)) || SECRETS.test(String(init.body ?? ''));
      if (!named) seen.push(`${response.status} ${await response.clone().text()}`);
      return response;
    };
    const askSql = (sql: string): Promise<Response> =>
      ask('/queries', {
        method: 'POST',
        body: JSON.stringify({ sql }),
        headers: { 'Content-Type': 'application/json' },
      });

    it('catalog: a hidden name and a missing name answer alike', async () => {
      await ask('/catalog');
      await ask('/catalog/demo');
      const hidden = await expectError(await ask('/catalog/hr'), 404, 'catalog_not_found');
      const missing = await expectError(await ask('/catalog/zz'), 404, 'catalog_not_found');
      expect(hidden.message.replace('hr', 'X')).toBe(missing.message.replace('zz', 'X'));
      const hiddenTable = await expectError(await ask('/catalog/hr/payroll_2026'), 404, 'catalog_not_found');
      const missingTable = await expectError(await ask('/catalog/hr/nothing_here'), 404, 'catalog_not_found');
      expect(hiddenTable.message.replace('payroll_2026', 'X')).toBe(missingTable.message.replace('nothing_here', 'X'));
      await expectError(await ask('/catalog/rival'), 404, 'catalog_not_found');
      await expectError(await ask('/catalog/rival/rival_org_table'), 404, 'catalog_not_found');
    });

    it('queries: hidden and missing tables are refused alike, and engine errors suggest only visible names', async () => {
      await expectError(await askSql('select * from hr.payroll_2026'), 403, 'grant_table_denied');
      await expectError(await askSql('select * from hr.not_a_table'), 403, 'grant_table_denied');
      await expectError(await askSql('select * from rival.rival_org_table'), 403, 'grant_table_denied');
      await expectError(await askSql('select * from information_schema.tables'), 403, 'grant_introspection_denied');
      // A binder error on a visible table: DuckDB's candidate names come from the restricted catalog only.
      const bad = (await (await askSql('select employee_fullnam from demo.orders')).json()) as Json;
      const failed = await finished({ ...api, request: (p, i) => api.request(p, { ...i, token: restricted }) }, bad.id);
      seen.push(JSON.stringify(failed));
      expect(failed.status).toBe('failed');
      const typo = (await (await askSql('select * from demo.order')).json()) as Json;
      seen.push(JSON.stringify(typo));
    });

    it('queries of others: neither their SQL nor their results, inline or as files', async () => {
      const owners = await submitOk(api, 'select * from hr.payroll_2026');
      const done = await finished(api, owners.id);
      expect(done.status).toBe('succeeded');
      await expectError(await ask(`/queries/${owners.id}`), 404, 'query_not_found');
      await expectError(await ask(`/queries/${owners.id}?format=inline`), 404, 'query_not_found');
      await expectError(await ask(`/queries/${owners.id}?format=files`), 404, 'query_not_found');
      // Nor through the job that records it.
      await expectError(await ask(`/jobs/${owners.id}`), 404, 'job_not_found');
      await expectError(await ask(`/jobs/${owners.id}/result`), 404, 'job_not_found');
      await expectError(await ask(`/jobs/${owners.id}/events`), 404, 'job_not_found');
      await expectError(await ask(`/jobs/${owners.id}/cancel`, { method: 'POST' }), 404, 'job_not_found');
      expect(((await (await ask('/jobs?limit=100')).json()) as Json).data.map((j: Json) => j.id)).not.toContain(
        owners.id,
      );
      // Its own query stays readable, results and download included.
      const mine = (await (await askSql('select count(*) as n from demo.orders')).json()) as Json;
      const own = await finished({ ...api, request: (p, i) => api.request(p, { ...i, token: restricted }) }, mine.id);
      expect(own.status).toBe('succeeded');
      const download = await ask(own.files[0].url.replace(api.baseUrl, ''));
      expect(download.status).toBe(200);
    });

    it('no response seen by the restricted caller mentions a hidden table, its columns or its rows', () => {
      expect(seen.length).toBeGreaterThan(10);
      for (const body of seen) expect(body).not.toMatch(SECRETS);
    });

    it("another organization's names are 404 for everyone here, the owner included", async () => {
      await expectError(await api.request('/catalog/rival'), 404, 'catalog_not_found');
      await expectError(await api.request('/catalog/rival/rival_org_table'), 404, 'catalog_not_found');
      const attempt = await finished(api, (await submitOk(api, 'select * from lake.rival.rival_org_table')).id);
      expect(attempt.status).toBe('failed');
      expect(JSON.stringify(attempt)).not.toMatch(/rival_secret_column/);
    });
  },
);
