import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../helpers/clock.js';
import { getFrom } from '../helpers/from-address.js';
import { overHttp, type Harness } from '../helpers/transports.js';

/**
 * Finding 3: every client shared one address (`address:local`), so 21 bad tokens from anyone locked out everybody,
 * and a flood of /version made it 429 for the load balancer. Limits are by the socket's address now, or by what a
 * proxy the operator trusts forwarded.
 */
describe('limits follow the real client address', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await overHttp.start({
      // A clock that stands still: no budget refills while the test spends it, however slowly a loaded machine runs.
      services: { clock: manualClock(), rateLimits: { perCaller: 120, perOrganization: 0, failedAuthPerAddress: 20 } },
    });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('21 bad tokens from 127.0.0.2 do not block a valid token from 127.0.0.3', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++)
      statuses.push(
        (await getFrom('127.0.0.2', `${api.baseUrl}/whoami`, { Authorization: 'Bearer pat_not_a_real_token' })).status,
      );
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses[20]).toBe(429);
    // The attacker stays blocked, even with the valid token (it is the address that is limited)…
    expect(
      (await getFrom('127.0.0.2', `${api.baseUrl}/whoami`, { Authorization: `Bearer ${api.home.ownerToken}` })).status,
    ).toBe(429);
    // … and the owner elsewhere is not.
    expect(
      (await getFrom('127.0.0.3', `${api.baseUrl}/whoami`, { Authorization: `Bearer ${api.home.ownerToken}` })).status,
    ).toBe(200);
  });

  it('/version, /healthz and /readyz answer whatever other clients send; other public endpoints limit per address', async () => {
    for (let i = 0; i < 125; i++) await getFrom('127.0.0.4', `${api.baseUrl}/errors/not_found`);
    expect((await getFrom('127.0.0.4', `${api.baseUrl}/errors/not_found`)).status).toBe(429);
    expect((await getFrom('127.0.0.5', `${api.baseUrl}/errors/not_found`)).status).toBe(404);
    const probes = await Promise.all(
      Array.from({ length: 130 }, (_, i) =>
        getFrom('127.0.0.4', `${api.baseUrl}${['/version', '/healthz', '/readyz'][i % 3]}`),
      ),
    );
    expect(probes.every((p) => p.status === 200)).toBe(true);
    expect(JSON.parse((await getFrom('127.0.0.6', `${api.baseUrl}/readyz`)).body)).toEqual({
      object: 'readiness',
      status: 'ready',
    });
    expect(JSON.parse((await getFrom('127.0.0.6', `${api.baseUrl}/healthz`)).body)).toEqual({
      object: 'health',
      status: 'ok',
    });
  });
});

describe('behind a trusted proxy (LAKE_TRUSTED_PROXIES)', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await overHttp.start({
      trustedProxies: ['127.0.0.7'],
      services: { clock: manualClock(), rateLimits: { perCaller: 120, perOrganization: 0, failedAuthPerAddress: 5 } },
    });
  });
  afterAll(async () => {
    await api?.close();
  });

  it("the proxy's X-Forwarded-For names the client; anyone else's is ignored", async () => {
    const bad = { Authorization: 'Bearer pat_not_a_real_token' };
    for (let i = 0; i < 5; i++)
      await getFrom('127.0.0.7', `${api.baseUrl}/whoami`, { ...bad, 'X-Forwarded-For': '203.0.113.9' });
    expect(
      (await getFrom('127.0.0.7', `${api.baseUrl}/whoami`, { ...bad, 'X-Forwarded-For': '203.0.113.9' })).status,
    ).toBe(429);
    // Another client through the same proxy is not blocked.
    expect(
      (
        await getFrom('127.0.0.7', `${api.baseUrl}/whoami`, {
          Authorization: `Bearer ${api.home.ownerToken}`,
          'X-Forwarded-For': '203.0.113.10',
        })
      ).status,
    ).toBe(200);
    // A client that is no trusted proxy cannot pick an address by header: its bad tokens count against itself.
    for (let i = 0; i < 5; i++)
      await getFrom('127.0.0.8', `${api.baseUrl}/whoami`, { ...bad, 'X-Forwarded-For': `198.51.100.${i}` });
    expect(
      (await getFrom('127.0.0.8', `${api.baseUrl}/whoami`, { ...bad, 'X-Forwarded-For': '198.51.100.77' })).status,
    ).toBe(429);

    // Each burst is one audit event of the service (no organization), naming the address the limit counted.
    const operator = await api.services.operators.issue('test');
    const audit = await getFrom('127.0.0.9', `${api.baseUrl}/audit_events?action=authentication.failed_burst`, {
      Authorization: `Bearer ${operator.secret}`,
    });
    expect(audit.status).toBe(200);
    const events = (JSON.parse(audit.body) as { data: Record<string, any>[] }).data;
    expect(events.map((e) => e.target.id).sort()).toEqual(['127.0.0.8', '203.0.113.9']);
    for (const event of events) {
      expect(event).toMatchObject({ organization: null, actor: { kind: 'anonymous', credential: null } });
      expect(event.details).toEqual({ last_error: 'invalid_credentials', route: '/whoami' });
    }
    expect(JSON.stringify(events)).not.toContain('pat_not_a_real_token');
  });

  it("an IPv6 client's addresses in one /64 share a budget, and its burst is audited as the /64", async () => {
    const bad = { Authorization: 'Bearer pat_not_a_real_token' };
    // A host given a /64 picks any of its 2^64 addresses: one budget each would be no budget.
    for (let i = 1; i <= 5; i++)
      await getFrom('127.0.0.7', `${api.baseUrl}/whoami`, { ...bad, 'X-Forwarded-For': `2001:db8:1:2::${i}` });
    for (const next of ['2001:db8:1:2::99', '2001:db8:1:2:ffff:ffff:ffff:ffff'])
      expect((await getFrom('127.0.0.7', `${api.baseUrl}/whoami`, { ...bad, 'X-Forwarded-For': next })).status).toBe(
        429,
      );
    // The next /64 is another network.
    const neighbour = await getFrom('127.0.0.7', `${api.baseUrl}/whoami`, {
      Authorization: `Bearer ${api.home.ownerToken}`,
      'X-Forwarded-For': '2001:db8:1:3::1',
    });
    expect(neighbour.status).toBe(200);
    const operator = await api.services.operators.issue('test-v6');
    const audit = await getFrom('127.0.0.9', `${api.baseUrl}/audit_events?action=authentication.failed_burst`, {
      Authorization: `Bearer ${operator.secret}`,
    });
    const events = (JSON.parse(audit.body) as { data: Record<string, any>[] }).data;
    const burst = events.find((e) => e.target.id === '2001:db8:1:2::/64');
    // The budget's /64 is the target; the address that spent it is the actor's.
    expect(burst).toMatchObject({
      target: { type: 'client_address' },
      actor: { client_address: '2001:db8:1:2:0:0:0:5' },
    });
  });

  it('records at most 60 bursts a minute, however many addresses start one; every one of them is refused alike', async () => {
    const bad = { Authorization: 'Bearer pat_not_a_real_token' };
    const operator = await api.services.operators.issue('test-cap');
    const bursts = async (): Promise<number> => {
      const audit = await getFrom(
        '127.0.0.9',
        `${api.baseUrl}/audit_events?action=authentication.failed_burst&limit=200`,
        {
          Authorization: `Bearer ${operator.secret}`,
        },
      );
      return (JSON.parse(audit.body) as { data: unknown[] }).data.length;
    };
    const before = await bursts();
    for (let n = 0; n < 70; n++) {
      const client = { ...bad, 'X-Forwarded-For': `198.18.${n >> 8}.${n & 0xff}` };
      for (let i = 0; i < 5; i++) await getFrom('127.0.0.7', `${api.baseUrl}/whoami`, client);
      expect((await getFrom('127.0.0.7', `${api.baseUrl}/whoami`, client)).status).toBe(429);
    }
    // The clock stands still: this minute held the bursts before too.
    expect(before).toBeGreaterThan(0);
    expect(await bursts()).toBe(60);
  }, 60_000);
});

describe('readiness follows the server', () => {
  it('/readyz answers 503 service_unavailable with Retry-After once the server is shutting down; /healthz stays ok', async () => {
    const api = await overHttp.start();
    try {
      expect((await getFrom('127.0.0.9', `${api.baseUrl}/readyz`)).status).toBe(200);
      api.services.stopStreams();
      const draining = await fetch(`${api.baseUrl}/readyz`);
      expect(draining.status).toBe(503);
      expect(draining.headers.get('retry-after')).toBe('2');
      expect(((await draining.json()) as { error: { code: string } }).error.code).toBe('service_unavailable');
      expect((await getFrom('127.0.0.9', `${api.baseUrl}/healthz`)).status).toBe(200);
    } finally {
      await api.close();
    }
  });
});
