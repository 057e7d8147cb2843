import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { expectError, finished, SLOW_SQL, submit, submitOk, type Json } from '../helpers/queries.js';

describe.each(TRANSPORTS)('query lifecycle over $name', (transport) => {
  let api: Harness | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it('Idempotency-Key replays the original query, refuses other SQL, and creates one query under concurrency', async () => {
    api = await transport.start();
    const first = await submit(api, 'select 1 as x', { key: 'k-1' });
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const original = (await first.json()) as Json;

    await finished(api, original.id);
    const again = await submit(api, 'select 1 as x', { key: 'k-1' });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(`/queries/${original.id}`);
    expect(await again.json()).toEqual(original);

    await expectError(await submit(api, 'select 2 as x', { key: 'k-1' }), 409, 'idempotency_key_reused');

    const burst = await Promise.all(
      Array.from({ length: 6 }, () => submit(api as Harness, 'select 3 as x', { key: 'k-burst' })),
    );
    const ids = new Set(await Promise.all(burst.map(async (r) => ((await r.json()) as Json).id)));
    expect(burst.every((r) => r.status === 202)).toBe(true);
    expect(ids.size).toBe(1);
    expect(burst.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(5);
  });

  it('the same key from another principal is a new request; a key expires after 24 hours', async () => {
    api = await transport.start();
    const other = await api.home.directory.createUser(api.home.organization.id, 'Other', 'member');
    const token = await api.home.credentials.issue({
      kind: 'pat',
      organizationId: api.home.organization.id,
      userId: other.id,
      name: 'o',
      scopes: ['query:read'],
    });
    const mine = (await (await submit(api, 'select 1', { key: 'shared' })).json()) as Json;
    const theirs = await submit(api, 'select 1', { key: 'shared', token: token.secret });
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(((await theirs.json()) as Json).id).not.toBe(mine.id);

    await api.home.db.run('UPDATE idempotency_keys SET created = created - 86401');
    const later = await submit(api, 'select 1', { key: 'shared' });
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(((await later.json()) as Json).id).not.toBe(mine.id);
    await expectError(await submit(api, 'select 1', { key: 'has space' }), 400, 'parameter_invalid', 'Idempotency-Key');
  });

  it('429 too_many_queries with Retry-After over the in-flight ceiling', async () => {
    api = await transport.start({ services: { querySettings: { maxInFlight: 1, timeoutMs: 20_000 } as never } });
    const slow = await submitOk(api, SLOW_SQL);
    const error = await submit(api, 'select 1');
    expect(error.headers.get('retry-after')).toBe('1');
    await expectError(error, 429, 'too_many_queries');
    expect(((await api.request(`/queries/${slow.id}`).then((r) => r.json())) as Json).status).toBe('running');
  });

  it('a long query neither blocks other requests nor outlives its time limit, and duration counts execution only', async () => {
    api = await transport.start({ services: { querySettings: { timeoutMs: 1500 } as never } });
    const slow = await submitOk(api, SLOW_SQL);
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      expect((await api.request('/version')).status).toBe(200);
      latencies.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(Math.max(...latencies)).toBeLessThan(250);
    const done = await finished(api, slow.id);
    expect(done.status).toBe('failed');
    expect(done.error.message).toMatch(/longer than the 1\.5 s limit/);
    expect(done.duration_ms).toBeGreaterThanOrEqual(1400);
    expect(done.duration_ms).toBeLessThan(5000);
  });

  it('other requests stay fast while a 10-second query runs', async () => {
    api = await transport.start({ services: { querySettings: { timeoutMs: 10_000 } as never } });
    const slow = await submitOk(api, SLOW_SQL);
    const started = Date.now();
    const latencies: number[] = [];
    while (Date.now() - started < 2000) {
      const t = performance.now();
      const status = ((await (await api.request(`/queries/${slow.id}`)).json()) as Json).status;
      latencies.push(performance.now() - t);
      expect(status).toBe('running');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(latencies.length).toBeGreaterThan(10);
    expect(Math.max(...latencies)).toBeLessThan(250);
  });

  it('keeps queries and results 48 hours by default, then removes both', async () => {
    api = await transport.start();
    const done = await finished(api, (await submitOk(api, 'select 1 as x')).id);
    const file = api.services.results.file((await api.services.queries.store.getById(done.id))!) as string;
    expect(existsSync(file)).toBe(true);
    expect(await api.services.queries.purgeExpired(Math.floor(Date.now() / 1000) + 24 * 3600)).toBe(0);
    expect(
      await api.services.queries.purgeExpired(Math.floor(Date.now() / 1000) + 48 * 3600 + 5),
    ).toBeGreaterThanOrEqual(1);
    expect(existsSync(file)).toBe(false);
    await expectError(await api.request(`/queries/${done.id}`), 404, 'query_not_found');
    await expectError(await api.request(done.files[0].url, { token: null }), 404, 'query_not_found');
  });
});
