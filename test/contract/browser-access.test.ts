import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corsOriginsFromEnv, InvalidCorsOrigin } from '../../src/service/api/middleware/cors.js';
import { signedStreamPath } from '../../src/service/files/url-signer.js';
import { overHttp, TRANSPORTS, type Harness } from '../helpers/transports.js';

type Json = Record<string, any>;
const PAGE_ORIGIN = 'http://127.0.0.1:5173';

describe.each(TRANSPORTS)('stream URLs for EventSource over $name', (transport) => {
  let api: Harness;
  beforeAll(async () => {
    api = await transport.start();
  });
  afterAll(async () => {
    await api?.close();
  });

  const json = async (
    path: string,
    init: RequestInit & { token?: string | null } = {},
  ): Promise<{ status: number; body: Json }> => {
    const response = await api.request(path, {
      ...init,
      headers: { 'Content-Type': 'application/json', ...(init.headers ?? {}) },
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const finishedQuery = async (): Promise<string> => {
    const { body } = await json('/queries', { method: 'POST', body: JSON.stringify({ sql: 'select 1 as one' }) });
    await api.request(`/queries/${body.id}?wait=20`);
    return body.id as string;
  };
  /** The stream URL's path and query, as a client would open it (the URL names the public origin). */
  const relative = (url: string): string => {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  };

  it("opens exactly that job's stream without an Authorization header, and nothing else", async () => {
    const id = await finishedQuery();
    const made = await json(`/jobs/${id}/stream_url`, { method: 'POST' });
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({
      object: 'stream_url',
      url: expect.stringContaining(`/jobs/${id}/events?stream_token=`),
      expires: expect.any(Number),
    });
    expect(made.body.expires - Date.now() / 1000).toBeGreaterThan(290);

    const stream = await api.request(relative(made.body.url), {
      token: null,
      headers: { Accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    const text = await stream.text();
    expect(text).toContain('event: job.succeeded');

    const token = new URL(made.body.url).searchParams.get('stream_token') as string;
    const other = await finishedQuery();
    // Another job's stream, a non-stream route, a forged signature: refused.
    const elsewhere = await api.request(`/jobs/${other}/events?stream_token=${encodeURIComponent(token)}`, {
      token: null,
    });
    expect(elsewhere.status).toBe(401);
    expect(((await elsewhere.json()) as Json).error.code).toBe('invalid_credentials');
    const notAStream = await api.request(`/jobs/${id}?stream_token=${encodeURIComponent(token)}`, { token: null });
    expect(notAStream.status).toBe(401);
    expect(((await notAStream.json()) as Json).error.code).toBe('authentication_required');
    const forged = await api.request(
      `/jobs/${id}/events?stream_token=${encodeURIComponent(token.replace(/.$/, (c) => (c === '0' ? '1' : '0')))}`,
      { token: null },
    );
    expect(forged.status).toBe(401);
  });

  it('expires after five minutes, dies with its credential, and needs the scope to be made', async () => {
    const id = await finishedQuery();
    const pat = (
      await json('/pats', {
        method: 'POST',
        body: JSON.stringify({ name: 'stream', scopes: ['query:read', 'jobs:read'] }),
      })
    ).body;
    const old = signedStreamPath(
      api.services.signer,
      `/jobs/${id}/events`,
      pat.id as string,
      Math.floor(Date.now() / 1000) - 301,
    );
    const expired = await api.request(old.path, { token: null });
    expect(expired.status).toBe(401);
    expect(((await expired.json()) as Json).error.code).toBe('credentials_expired');

    const made = await json(`/jobs/${id}/stream_url`, { method: 'POST', token: pat.secret as string });
    expect(made.status).toBe(200);
    await json(`/pats/${pat.id}/revoke`, { method: 'POST' });
    const revoked = await api.request(relative(made.body.url), { token: null });
    expect(revoked.status).toBe(401);
    expect(((await revoked.json()) as Json).error.code).toBe('credentials_revoked');

    const narrow = (
      await json('/pats', { method: 'POST', body: JSON.stringify({ name: 'no jobs', scopes: ['query:read'] }) })
    ).body;
    expect((await json(`/jobs/${id}/stream_url`, { method: 'POST', token: narrow.secret as string })).status).toBe(403);
    expect((await json('/jobs/qr_doesnotexist/stream_url', { method: 'POST' })).status).toBe(404);
    expect((await json('/sources/src_doesnotexist/sync/stream_url', { method: 'POST' })).status).toBe(404);
  });
});

describe('CORS for the origins an operator allows', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await overHttp.start({ corsOrigins: [PAGE_ORIGIN] });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('answers preflights and marks responses for an allowed origin only', async () => {
    const preflight = await fetch(`${api.baseUrl}/queries`, {
      method: 'OPTIONS',
      headers: {
        Origin: PAGE_ORIGIN,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(PAGE_ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();

    const posted = await api.request('/queries', {
      method: 'POST',
      body: JSON.stringify({ sql: 'select 1' }),
      headers: { Origin: PAGE_ORIGIN, 'Content-Type': 'application/json' },
    });
    expect(posted.status).toBe(202);
    expect(posted.headers.get('access-control-allow-origin')).toBe(PAGE_ORIGIN);
    expect(posted.headers.get('access-control-expose-headers')).toContain('Request-Id');

    const stranger = await api.request('/whoami', { headers: { Origin: 'http://evil.example' } });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
    const strangerPreflight = await fetch(`${api.baseUrl}/queries`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(strangerPreflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('is off unless configured; LAKE_CORS_ORIGINS takes exact origins only', async () => {
    const plain = await overHttp.start();
    try {
      const response = await plain.request('/whoami', { headers: { Origin: PAGE_ORIGIN } });
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await plain.close();
    }
    expect(corsOriginsFromEnv({ LAKE_CORS_ORIGINS: ' https://app.example.com, http://localhost:5173 ' })).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
    expect(corsOriginsFromEnv({})).toEqual([]);
    for (const bad of [
      '*',
      'https://app.example.com/',
      'app.example.com',
      'ftp://x.example',
      'https://x.example/path',
    ]) {
      expect(() => corsOriginsFromEnv({ LAKE_CORS_ORIGINS: bad }), bad).toThrow(InvalidCorsOrigin);
    }
  });
});
