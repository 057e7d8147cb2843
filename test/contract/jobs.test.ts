import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobStore } from '../../src/service/jobs/job-store.js';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { expectError, finished, SLOW_SQL, submitOk, type Json, jobWhen } from '../helpers/queries.js';

describe.each(TRANSPORTS)('jobs over $name', (transport) => {
  let api: Harness;
  let org: string;
  beforeAll(async () => {
    api = await transport.start({ services: { querySettings: { timeoutMs: 60_000 } as never } });
    org = api.home.organization.id;
  });
  afterAll(async () => {
    await api.close();
  });
  const json = async (path: string, init: RequestInit & { token?: string } = {}): Promise<Json> =>
    (await (await api.request(path, init)).json()) as Json;
  const waitFor = (id: string, status: string): Promise<Json> =>
    jobWhen(
      (path) => json(path),
      id,
      (job) => job.status === status,
      5000,
    );

  it('every query is a job with the same id; GET /jobs/{id} gives status, timestamps, kind and failure', async () => {
    const ok = await finished(api, (await submitOk(api, 'select 1 as x')).id);
    expect(await json(`/jobs/${ok.id}`)).toEqual({
      object: 'job',
      id: ok.id,
      kind: 'query',
      status: 'succeeded',
      created: expect.any(Number),
      started: expect.any(Number),
      finished: expect.any(Number),
      error: null,
      cancel_requested: false,
      resource: `/queries/${ok.id}`,
      sql: 'select 1 as x',
    });
    const bad = await finished(api, (await submitOk(api, "select 'x'::int")).id);
    expect((await json(`/jobs/${bad.id}`)).error).toEqual({
      code: 'query_failed',
      message: expect.stringContaining('Could not convert'),
    });
  });

  it('GET /jobs pages newest first with has_more and next_cursor, and refuses bad limits and cursors', async () => {
    for (let i = 0; i < 5; i++) await finished(api, (await submitOk(api, `select ${i} as i`)).id);
    const all: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await json(`/jobs?limit=3${cursor ? `&starting_after=${cursor}` : ''}`);
      expect(page.object).toBe('list');
      all.push(...page.data.map((j: Json) => j.id));
      if (!page.has_more) {
        expect(page.next_cursor).toBeNull();
        break;
      }
      cursor = page.next_cursor;
    }
    const created = await Promise.all(all.map(async (id) => (await json(`/jobs/${id}`)).created as number));
    expect([...created].sort((a, b) => b - a)).toEqual(created);
    expect(new Set(all).size).toBe(all.length);
    expect((await json('/jobs')).data.length).toBeLessThanOrEqual(20);
    for (const limit of ['0', '101', 'x'])
      await expectError(await api.request(`/jobs?limit=${limit}`), 400, 'parameter_invalid', 'limit');
    await expectError(await api.request('/jobs?starting_after=qr_nope'), 400, 'invalid_cursor', 'starting_after');
  });

  it('404 job_not_found for unknown ids and other organizations', async () => {
    await expectError(await api.request('/jobs/qr_unknown'), 404, 'job_not_found');
    const mine = await submitOk(api, 'select 1');
    const rival = await api.home.directory.createOrganization('Rival');
    const owner = await api.home.directory.createUser(rival.id, 'R', 'owner');
    const token = (
      await api.home.credentials.issue({
        kind: 'pat',
        organizationId: rival.id,
        userId: owner.id,
        name: 'r',
        scopes: ['jobs:read', 'jobs:manage'],
      })
    ).secret;
    await expectError(await api.request(`/jobs/${mine.id}`, { token }), 404, 'job_not_found');
    await expectError(await api.request(`/jobs/${mine.id}/events`, { token }), 404, 'job_not_found');
    await expectError(await api.request(`/jobs/${mine.id}/cancel`, { method: 'POST', token }), 404, 'job_not_found');
    expect((await json('/jobs', { token })).data).toEqual([]);
  });

  it('GET /jobs/{id}/result signs fresh URLs for a succeeded query, and answers 409 otherwise', async () => {
    const ok = await finished(api, (await submitOk(api, 'select 42 as answer')).id);
    const result = await json(`/jobs/${ok.id}/result`);
    expect(result).toMatchObject({
      object: 'job_result',
      job: ok.id,
      row_count: 1,
      files: [{ bytes: expect.any(Number), expires: expect.any(Number) }],
    });
    expect(Math.abs(result.files[0].expires - (Date.now() / 1000 + 3600))).toBeLessThan(5);
    expect((await api.request(result.files[0].url, { token: null })).status).toBe(200);
    const bad = await finished(api, (await submitOk(api, "select 'x'::int")).id);
    await expectError(await api.request(`/jobs/${bad.id}/result`), 409, 'job_has_no_result');
    const slow = await submitOk(api, SLOW_SQL);
    await expectError(await api.request(`/jobs/${slow.id}/result`), 409, 'job_not_finished');
    await json(`/jobs/${slow.id}/cancel`, { method: 'POST' });
  });

  it('POST /jobs/{id}/cancel interrupts a running query; again is harmless; finished work is not cancellable', async () => {
    const slow = await submitOk(api, SLOW_SQL);
    const outcome = await json(`/jobs/${slow.id}/cancel`, { method: 'POST' });
    expect(outcome).toMatchObject({
      object: 'job_cancellation',
      job: { id: slow.id, cancel_requested: true },
      execution_may_continue: expect.any(Boolean),
    });
    const job = await waitFor(slow.id, 'cancelled');
    expect(job.error).toEqual({ code: 'cancelled', message: expect.any(String) });
    expect((await json(`/queries/${slow.id}`)).status).toBe('cancelled');
    expect(await json(`/jobs/${slow.id}/cancel`, { method: 'POST' })).toMatchObject({
      job: { status: 'cancelled' },
      execution_may_continue: false,
    });
    const ok = await finished(api, (await submitOk(api, 'select 1')).id);
    await expectError(await api.request(`/jobs/${ok.id}/cancel`, { method: 'POST' }), 409, 'job_not_cancellable');
  });

  it('cancels queued work atomically, and a cancel asked by another process reaches the running query', async () => {
    const store = new JobStore(api.home.db);
    await store.create({
      id: 'qr_queuedtest0000000000000000',
      organizationId: org,
      kind: 'query',
      principalId: api.home.owner.id,
      credentialId: 'x',
    });
    const queued = await json('/jobs/qr_queuedtest0000000000000000/cancel', { method: 'POST' });
    expect(queued).toMatchObject({
      job: { status: 'cancelled', error: { code: 'cancelled' } },
      execution_may_continue: false,
    });

    // Another process sees only the database: it sets the durable flag; the process running the query stops it.
    const slow = await submitOk(api, SLOW_SQL);
    expect(await store.requestCancel(slow.id)).toBe(true);
    expect((await waitFor(slow.id, 'cancelled')).cancel_requested).toBe(true);
  });

  it('reading jobs needs jobs:read and cancelling needs jobs:manage', async () => {
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
    await expectError(await api.request('/jobs', { token: await issue(['query:read']) }), 403, 'missing_scope');
    const reader = await issue(['jobs:read']);
    const job = await submitOk(api, 'select 1');
    expect((await api.request(`/jobs/${job.id}`, { token: reader })).status).toBe(200);
    await expectError(
      await api.request(`/jobs/${job.id}/cancel`, { method: 'POST', token: reader }),
      403,
      'missing_scope',
    );
  });

  it('a principal restricted by table permissions sees only its own jobs', async () => {
    const user = await api.home.directory.createUser(org, 'Restricted', 'member');
    const token = (
      await api.home.credentials.issue({
        kind: 'pat',
        organizationId: org,
        userId: user.id,
        name: 'r',
        scopes: ['jobs:read', 'query:read'],
      })
    ).secret;
    const owners = await submitOk(api, 'select 1');
    await api.services.permissions.setEnabled(org, true);
    try {
      await expectError(await api.request(`/jobs/${owners.id}`, { token }), 404, 'job_not_found');
      expect((await json('/jobs?limit=100', { token })).data).toEqual([]);
    } finally {
      await api.services.permissions.setEnabled(org, false);
    }
  });
});
