import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LakeApiError, LakeConnectionError } from '../../src/client/errors.js';
import { LakeClient } from '../../src/client/lake-client.js';
import { remoteFetch } from '../../src/client/transport.js';
import { DEFAULT_RETRY_POLICY, retryDelayMs } from '../../src/client/retry.js';

// A stand-in for a flaky proxy or an overloaded upstream: the client's retry rules are about servers outside our control.
type Step = (req: IncomingMessage, res: ServerResponse) => void;
let server: Server | undefined;
afterEach(() => server?.close());

async function scriptedServer(steps: Step[]): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  server = createServer((req, res) => {
    const step = steps[Math.min(hits, steps.length - 1)] as Step;
    hits++;
    step(req, res);
  });
  await new Promise<void>((resolve) => (server as Server).listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

const reply =
  (status: number, body: object, headers: Record<string, string> = {}): Step =>
  (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
const rateLimited = reply(
  429,
  {
    error: { type: 'rate_limit_error', code: 'rate_limited', message: 'slow down', request_id: 'req_1', doc_url: 'x' },
  },
  { 'Retry-After': '2' },
);

describe('LakeClient retries', () => {
  it('waits the Retry-After of a 429 and retries a GET, saying why', async () => {
    const { url, hits } = await scriptedServer([rateLimited, reply(200, { ok: true })]);
    const waits: number[] = [];
    const notices: string[] = [];
    const client = new LakeClient({
      fetch: await remoteFetch(),
      baseUrl: url,
      sleep: async (ms) => void waits.push(ms),
      onRetry: (n) => notices.push(n.reason),
    });
    expect(await client.request('GET', '/x').then((r) => r.body)).toEqual({ ok: true });
    expect(hits()).toBe(2);
    expect(waits).toEqual([2000]);
    expect(notices).toEqual(['rate limited by the service (HTTP 429)']);
  });

  it('retries 502/503/504 with capped, jittered backoff, then gives the last error', async () => {
    const { url, hits } = await scriptedServer([reply(503, {})]);
    const waits: number[] = [];
    const client = new LakeClient({
      fetch: await remoteFetch(),
      baseUrl: url,
      sleep: async (ms) => void waits.push(ms),
    });
    const error = await client
      .request('GET', '/x')
      .then((r) => r.body)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LakeApiError);
    expect((error as LakeApiError).status).toBe(503);
    expect(hits()).toBe(DEFAULT_RETRY_POLICY.maxAttempts);
    expect(waits).toHaveLength(DEFAULT_RETRY_POLICY.maxAttempts - 1);
    waits.forEach((ms, i) => expect(ms).toBeLessThanOrEqual(DEFAULT_RETRY_POLICY.baseDelayMs * 2 ** i));
  });

  it('does not retry a POST without an Idempotency-Key, and does retry one with it', async () => {
    const first = await scriptedServer([rateLimited, reply(200, { ok: true })]);
    const client = new LakeClient({ fetch: await remoteFetch(), baseUrl: first.url, sleep: async () => {} });
    const error = await client.request('POST', '/x', { body: {} }).catch((e: unknown) => e);
    expect((error as LakeApiError).code).toBe('rate_limited');
    expect((error as LakeApiError).retryAfterSeconds).toBe(2);
    expect(first.hits()).toBe(1);
    server?.close();

    const second = await scriptedServer([rateLimited, reply(200, { ok: true })]);
    const keyed = new LakeClient({ fetch: await remoteFetch(), baseUrl: second.url, sleep: async () => {} });
    expect((await keyed.request('POST', '/x', { body: {}, idempotencyKey: 'k1' })).body).toEqual({ ok: true });
    expect(second.hits()).toBe(2);
  });

  it('does not wait out an unreasonable Retry-After; the caller gets the error at once', async () => {
    const { url, hits } = await scriptedServer([
      reply(429, { error: { code: 'rate_limited', message: 'm' } }, { 'Retry-After': '3600' }),
    ]);
    const client = new LakeClient({
      fetch: await remoteFetch(),
      baseUrl: url,
      sleep: async () => {
        throw new Error('should not sleep');
      },
    });
    await expect(client.request('GET', '/x').then((r) => r.body)).rejects.toMatchObject({
      code: 'rate_limited',
      retryAfterSeconds: 3600,
    });
    expect(hits()).toBe(1);
  });

  it('builds a useful error from a body that is not the envelope', async () => {
    const { url } = await scriptedServer([
      (_q, res) => {
        res.writeHead(400, { 'Request-Id': 'req_abc' });
        res.end('<html>bad</html>');
      },
    ]);
    const client = new LakeClient({ fetch: await remoteFetch(), baseUrl: url });
    await expect(client.request('GET', '/x').then((r) => r.body)).rejects.toMatchObject({
      status: 400,
      code: 'http_400',
      requestId: 'req_abc',
    });
  });

  it('reports an unreachable service as a connection error without leaking credentials in the URL', async () => {
    const client = new LakeClient({
      fetch: await remoteFetch(),
      baseUrl: 'http://user:hunter2@127.0.0.1:9',
      sleep: async () => {},
    });
    const error = await client
      .request('GET', '/x')
      .then((r) => r.body)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LakeConnectionError);
    expect((error as Error).message).not.toContain('hunter2');
  });

  it('backoff without Retry-After stays within the exponential ceiling', () => {
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 1, undefined, () => 1)).toBe(500);
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 10, undefined, () => 1)).toBe(DEFAULT_RETRY_POLICY.maxDelayMs);
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 1, 7)).toBe(7000);
  });
});
