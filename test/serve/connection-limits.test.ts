import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionLimitsFromEnv } from '../../src/service/api/server/connection-gate.js';
import { getFrom } from '../helpers/from-address.js';
import { ownerApi, startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

/** A connection from a chosen loopback address that sends half a request's headers and then nothing. */
function slowClient(url: URL, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), localAddress });
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      resolve(socket);
    });
  });
}

/** Opens a connection and reads whatever the server sends before it closes (a refused one's whole answer). */
function answerAtConnect(url: URL, localAddress: string): Promise<string> {
  return closedAtConnect(url, localAddress).then(({ text }) => text);
}

/** What the server sent a new connection, and whether it closed it before the client gave up (3 s). */
function closedAtConnect(url: URL, localAddress: string): Promise<{ text: string; byServer: boolean }> {
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), localAddress });
    let text = '';
    let byServer = true;
    socket.on('data', (d: Buffer) => (text += d.toString()));
    socket.once('error', () => undefined);
    socket.once('close', () => resolve({ text, byServer }));
    // A refused connection is answered without waiting for the request; an admitted one waits for it.
    setTimeout(() => {
      byServer = false;
      socket.destroy();
    }, 3_000);
  });
}

/**
 * Every connection is a file descriptor of `lake serve`, and there was no ceiling: 400 connections that sent half a
 * request's headers, from one client, took every descriptor a server with 300 had (Node kept each a minute), and
 * every other client's request, /healthz included, got no answer at all. Each client address now holds at most
 * LAKE_MAX_CONNECTIONS_PER_CLIENT, the server at most LAKE_MAX_CONNECTIONS (by default half its open-file limit).
 */
describe('lake serve holds a bounded number of connections', () => {
  let server: ServeProcess;
  let url: URL;
  let home: string;
  const held: Socket[] = [];
  beforeAll(async () => {
    home = join(tempDir('lake-connections'), 'home');
    server = await startServeProcess({
      LAKE_HOME: home,
      LAKE_MAX_CONNECTIONS: '40',
      LAKE_MAX_CONNECTIONS_PER_CLIENT: '10',
      LAKE_TRUSTED_PROXIES: '127.0.0.9',
    });
    url = new URL(server.url);
  }, 30_000);
  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await server?.stop();
  });

  it('refuses a client past its connections with 429 at once, and serves other clients', async () => {
    for (let i = 0; i < 10; i++) held.push(await slowClient(url, '127.0.0.2'));
    const refused = await answerAtConnect(url, '127.0.0.2');
    expect(refused).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
    expect(refused).toMatch(/\r\nRetry-After: 1\r\n/);
    expect(refused).toMatch(/\r\nRequest-Id: req_[0-9a-f]{24}\r\n/);
    const body = JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4)) as { error: Record<string, string> };
    expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
    expect(body.error.message).toMatch(/LAKE_MAX_CONNECTIONS_PER_CLIENT/);
    // Another address, and the owner's API, are served meanwhile.
    expect((await getFrom('127.0.0.3', `${server.url}/healthz`)).status).toBe(200);
    const { api } = ownerApi(home, () => server);
    expect((await api('/whoami')).object).toBeDefined();
  });

  it("past the server's ceiling, refuses with 503; a trusted proxy has only that ceiling; closed connections free it", async () => {
    // A proxy carries many clients: 25 connections from it are more than a client's 10.
    for (let i = 0; i < 25; i++) held.push(await slowClient(url, '127.0.0.9'));
    for (let i = 0; i < 5; i++) held.push(await slowClient(url, '127.0.0.4'));
    expect(held).toHaveLength(40);
    const refused = await answerAtConnect(url, '127.0.0.5');
    expect(refused).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4))).toMatchObject({
      error: { code: 'service_unavailable', message: expect.stringMatching(/LAKE_MAX_CONNECTIONS\)/) },
    });
    // A burst of refused connections: each answered, the log not a line per connection.
    const burst = await Promise.all(Array.from({ length: 30 }, () => answerAtConnect(url, '127.0.0.6')));
    expect(burst.every((answer) => answer.startsWith('HTTP/1.1 503 '))).toBe(true);
    for (const socket of held.splice(0)) socket.destroy();
    // The server counts a connection as gone once it has closed on its side too.
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await getFrom('127.0.0.5', `${server.url}/healthz`).catch(() => ({ status: 0 }))).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    // Refusals are logged, at most a line a second, never a line per connection.
    const lines = server.logLines().filter((l) => l.msg === 'connection refused');
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThanOrEqual(4);
    expect(lines.reduce((sum, l) => sum + 1 + Number(l.refused_since_last_line), 0)).toBeLessThanOrEqual(33);
  });
});

describe('a request whose headers never end', () => {
  it('is answered 400 and closed once 20 s have passed since its connection, not after a minute', async () => {
    const home = join(tempDir('lake-connections-slow'), 'home');
    const server = await startServeProcess({ LAKE_HOME: home });
    try {
      const socket = await slowClient(new URL(server.url), '127.0.0.11');
      const opened = Date.now();
      let answer = '';
      socket.on('data', (d: Buffer) => (answer += d.toString()));
      await new Promise<void>((resolve) => socket.once('close', () => resolve()));
      const seconds = (Date.now() - opened) / 1000;
      // Node looks for connections past the timeout every 2 s: closed between 20 and 22 s (Node's own was 60 s).
      expect(seconds).toBeGreaterThanOrEqual(19);
      expect(seconds).toBeLessThan(30);
      expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
        error: { code: 'malformed_request', message: expect.stringMatching(/headers within 20 s of the connection/) },
      });
    } finally {
      await server.stop();
    }
  }, 45_000);
});

describe('the metrics address', () => {
  it('holds at most 32 connections: more are closed as they come, and a scrape works once they go', async () => {
    const home = join(tempDir('lake-connections-metrics'), 'home');
    const server = await startServeProcess({ LAKE_HOME: home, LAKE_METRICS_ADDR: '127.0.0.1:0' });
    const sockets: Socket[] = [];
    try {
      const scrape = new URL(String(server.logLines().find((l) => l.msg === 'metrics listening')?.url));
      for (let i = 0; i < 32; i++) sockets.push(await slowClient(scrape, '127.0.0.7'));
      // Node closes the one past the ceiling without an answer.
      expect(await closedAtConnect(scrape, '127.0.0.7')).toEqual({ text: '', byServer: true });
      for (const socket of sockets.splice(0)) socket.destroy();
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = (await getFrom('127.0.0.8', scrape.href).catch(() => ({ status: 0 }))).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(200);
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.stop();
    }
  });
});

describe('connection ceilings from the environment', () => {
  it('default to half the open-file limit (at most 10,000), and a quarter of that per client (at most 256); bad values are refused', () => {
    expect(connectionLimitsFromEnv({}, () => 1024)).toEqual({ total: 512, perClient: 128 });
    expect(connectionLimitsFromEnv({}, () => 20_000)).toEqual({ total: 10_000, perClient: 256 });
    expect(connectionLimitsFromEnv({ LAKE_MAX_CONNECTIONS: '40' }, () => 1024)).toEqual({ total: 40, perClient: 10 });
    expect(connectionLimitsFromEnv({}, () => 1_048_576)).toEqual({ total: 10_000, perClient: 256 });
    expect(connectionLimitsFromEnv({}, () => undefined)).toEqual({ total: 1_000, perClient: 250 });
    expect(connectionLimitsFromEnv({ LAKE_MAX_CONNECTIONS_PER_CLIENT: '0' }, () => 1024).perClient).toBe(0);
    expect(() => connectionLimitsFromEnv({ LAKE_MAX_CONNECTIONS: '0' }, () => 1024)).toThrow(
      /LAKE_MAX_CONNECTIONS must/,
    );
    expect(() => connectionLimitsFromEnv({ LAKE_MAX_CONNECTIONS_PER_CLIENT: 'many' }, () => 1024)).toThrow(
      /LAKE_MAX_CONNECTIONS_PER_CLIENT must/,
    );
  });
});
