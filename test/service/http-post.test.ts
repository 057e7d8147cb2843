import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postOnce } from '../../src/service/net/http-post.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

/** A receiver that answers each POST with `status` and then a body that never ends; it counts what it wrote. */
async function endlessReceiver(status: number): Promise<{ url: string; written: () => number; closed: Promise<void> }> {
  let written = 0;
  let closed!: () => void;
  const wasClosed = new Promise<void>((r) => (closed = r));
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(status, { 'Content-Type': 'text/plain' });
    const chunk = Buffer.alloc(16 * 1024, 'x');
    const timer = setInterval(() => {
      if (res.destroyed) return;
      res.write(chunk);
      written += chunk.length;
    }, 5);
    res.on('close', () => {
      clearInterval(timer);
      closed();
    });
  });
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, written: () => written, closed: wasClosed };
}

describe('a webhook POST', () => {
  it("is settled by the answer's status at once, whatever body follows, and reads at most 64 KB of it", async () => {
    const receiver = await endlessReceiver(200);
    const started = Date.now();
    const outcome = await postOnce(
      receiver.url,
      { 'Content-Type': 'application/json' },
      '{}',
      AbortSignal.timeout(30_000),
    );
    expect(outcome.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(5_000);
    // The body without end is cut off: the connection is closed once 64 KB of it have been read.
    await receiver.closed;
    expect(receiver.written()).toBeLessThan(16 * 1024 * 1024);
  });

  it('gives an error status as it comes too', async () => {
    const receiver = await endlessReceiver(503);
    const outcome = await postOnce(receiver.url, {}, '{}', AbortSignal.timeout(30_000));
    expect(outcome.status).toBe(503);
  });
});
