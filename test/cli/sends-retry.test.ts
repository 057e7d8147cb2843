import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { startServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A proxy in front of `lake serve` that passes every request on, but answers the first POST of a send's run with a
 * 503 after the server has taken it: the answer lost on the way back that a client can only retry.
 */
function losingFirstRun(target: string): { server: Server; forwardedRuns: () => number } {
  let runs = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
        ) as Record<string, string>;
        const answer = await fetch(`${target}${req.url}`, {
          method: req.method,
          headers,
          body: chunks.length ? Buffer.concat(chunks) : undefined,
        });
        const body = Buffer.from(await answer.arrayBuffer());
        if (req.method === 'POST' && /^\/sends\/[^/]+\/run$/.test(req.url ?? '') && runs++ === 0) {
          res.writeHead(503, { 'Content-Type': 'text/plain' }).end('lost on the way back');
          return;
        }
        res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(body);
      })();
    });
  });
  return { server, forwardedRuns: () => runs };
}

describe('lake sends run over the API', () => {
  it('retries a run whose answer was lost with the same Idempotency-Key: the rows are delivered once', async () => {
    const home = join(tempDir('lake-send-retry'), 'home');
    let deliveries = 0;
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        deliveries++;
        res.end('ok');
      });
    });
    const receiverUrl = await listen(receiver);
    const server = await startServeProcess({ LAKE_HOME: home });
    const proxy = losingFirstRun(server.url);
    const proxyUrl = await listen(proxy.server);
    try {
      const token = readFileSync(join(home, 'owner.token'), 'utf8').trim();
      const send = (await (
        await fetch(`${server.url}/sends`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            name: 'retried',
            sql: 'select 1 as x',
            destination: { type: 'webhook', url: `${receiverUrl}/hook` },
          }),
        })
      ).json()) as { id: string };
      const result = await runLake(['sends', 'run', send.id, '--json'], {
        env: { LAKE_BASE_URL: proxyUrl, LAKE_TOKEN: token, LAKE_CONFIG_DIR: tempDir('lake-send-retry-config') },
        timeoutMs: 60_000,
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/HTTP 503; retrying in/);
      expect(proxy.forwardedRuns()).toBe(2);
      expect(JSON.parse(result.stdout)).toMatchObject({ object: 'send_run', status: 'succeeded', rows_sent: 1 });
      expect(deliveries).toBe(1);
      const runs = (await (
        await fetch(`${server.url}/sends/${send.id}/runs`, { headers: { Authorization: `Bearer ${token}` } })
      ).json()) as { data: unknown[] };
      expect(runs.data).toHaveLength(1);
    } finally {
      proxy.server.close();
      receiver.close();
      await server.stop();
    }
  }, 90_000);
});
