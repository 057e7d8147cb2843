import { afterEach, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/service/limits/rate-limiter.js';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { expectError } from '../helpers/queries.js';
import { manualClock } from '../helpers/clock.js';

describe('GCRA limiter', () => {
  it('admits a burst up to the limit, then one request per 60 s / limit, never 2x at a boundary', async () => {
    const clock = manualClock();
    const limiter = new RateLimiter({ perCaller: 120, perOrganization: 600 }, clock);
    let admitted = 0;
    for (let i = 0; i < 200; i++) if ((await limiter.admit('a', 'org')).allowed) admitted++;
    expect(admitted).toBe(120);
    const refused = await limiter.admit('a', 'org');
    expect(refused).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    clock.advance(499);
    expect((await limiter.admit('a', 'org')).allowed).toBe(false);
    clock.advance(1);
    expect((await limiter.admit('a', 'org')).allowed).toBe(true);
    // Across any 60 s window, at most 120 + 120 (the burst and the refill) pass: sliding, not 240 at a boundary edge.
    const fresh = new RateLimiter({ perCaller: 120, perOrganization: 0 }, clock);
    let inMinute = 0;
    for (let ms = 0; ms < 60_000; ms += 100) {
      for (let j = 0; j < 5; j++) if ((await fresh.admit('b', undefined)).allowed) inMinute++;
      clock.advance(100);
    }
    expect(inMinute).toBeLessThanOrEqual(240);
    expect(inMinute).toBeGreaterThanOrEqual(235);
  });

  it('the organization budget is shared by its callers, and a refused caller spends none of it', async () => {
    const clock = manualClock();
    const limiter = new RateLimiter({ perCaller: 120, perOrganization: 600 }, clock);
    let admitted = 0;
    for (let caller = 0; caller < 10; caller++)
      for (let i = 0; i < 120; i++) if ((await limiter.admit(`c${caller}`, 'org')).allowed) admitted++;
    expect(admitted).toBe(600);
    const blocked = await limiter.admit('c99', 'org');
    expect(blocked).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    expect((await limiter.admit('other', 'org2')).allowed).toBe(true);
  });
});

describe.each(TRANSPORTS)('rate limits over $name', (transport) => {
  let api: Harness | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it('429 rate_limited with an accurate Retry-After and the budgets left in headers; polling counts', async () => {
    const clock = manualClock();
    api = await transport.start({ services: { clock, rateLimits: { perCaller: 120, perOrganization: 600 } } });
    let last: Response | undefined;
    for (let i = 0; i < 120; i++) {
      last = await api.request('/whoami');
      expect(last.status).toBe(200);
    }
    expect(last?.headers.get('x-ratelimit-limit')).toBe('120');
    expect(last?.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(last?.headers.get('x-ratelimit-org-limit')).toBe('600');
    expect(last?.headers.get('x-ratelimit-org-remaining')).toBe('480');
    const limited = await api.request('/jobs');
    expect(limited.headers.get('retry-after')).toBe('1');
    // The caller's budget refused it; the organization's still has what it had (it said 0).
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-org-remaining')).toBe('480');
    await expectError(limited, 429, 'rate_limited');
    // A stream (re)connection is a request like any other.
    await expectError(
      await api.request('/jobs/qr_anything/events', { headers: { Accept: 'text/event-stream' } }),
      429,
      'rate_limited',
    );
    clock.advance(1000);
    // One request refills every 500 ms: after 1 s there is room for two, and one is used now.
    const again = await api.request('/whoami');
    expect(again.status).toBe(200);
    expect(again.headers.get('x-ratelimit-remaining')).toBe('1');
    clock.advance(30_000);
    expect((await api.request('/whoami')).headers.get('x-ratelimit-remaining')).toBe('60');
  });

  it('600 per organization across its callers', async () => {
    const clock = manualClock();
    api = await transport.start({ services: { clock, rateLimits: { perCaller: 120, perOrganization: 600 } } });
    const org = api.home.organization.id;
    const tokens = await Promise.all(
      Array.from(
        { length: 6 },
        async (_, i) =>
          (
            await api!.home.credentials.issue({
              kind: 'pat',
              organizationId: org,
              userId: api!.home.owner.id,
              name: `t${i}`,
              scopes: ['jobs:read'],
            })
          ).secret,
      ),
    );
    const keyed = await Promise.all(
      tokens.map(
        async (t, i) =>
          (
            await api!.home.credentials.issue({
              kind: 'service_key',
              organizationId: org,
              userId: null,
              name: `k${i}`,
              scopes: ['jobs:read'],
            })
          ).secret,
      ),
    );
    let ok = 0;
    // PATs of one person share that person's budget; service keys are callers of their own.
    for (const token of keyed)
      for (let i = 0; i < 120; i++) if ((await api.request('/jobs?limit=1', { token })).status === 200) ok++;
    expect(ok).toBe(600);
    const refused = await api.request('/jobs?limit=1', { token: tokens[0] });
    await expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('public endpoints count per client address; the probes (/version, /healthz, /readyz) never', async () => {
    const clock = manualClock();
    api = await transport.start({ services: { clock, rateLimits: { perCaller: 5, perOrganization: 0 } } });
    for (let i = 0; i < 5; i++) expect((await api.request('/errors/rate_limited', { token: null })).status).toBe(200);
    await expectError(await api.request('/errors/rate_limited', { token: null }), 429, 'rate_limited');
    for (const path of ['/version', '/healthz', '/readyz'])
      for (let i = 0; i < 6; i++) expect((await api.request(path, { token: null })).status).toBe(200);
  });
});
