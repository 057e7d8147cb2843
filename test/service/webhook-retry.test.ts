import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { REAL_CLOCK } from '../../src/service/core/clock.js';
import { retryAfter, WebhookDelivery } from '../../src/service/sends/deliveries/webhook-delivery.js';

describe('webhook retries', () => {
  it('follow the backoff when the receiver gives no Retry-After (they came all at once), and honour one that it gives', async () => {
    const arrivals: number[] = [];
    const statuses = [503, 503, 429, 200];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        arrivals.push(Date.now());
        const status = statuses.shift() ?? 200;
        res.writeHead(status, status === 429 ? { 'Retry-After': '1' } : {});
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const delivery = new WebhookDelivery(
        { type: 'webhook', url, format: 'json', batch_size: 10 },
        'secret-of-sixteen-chars',
        { send: 'snd_x', run: 'snr_x' },
        REAL_CLOCK,
        { attempts: 5, baseDelayMs: 150, maxDelayMs: 5000, timeoutMs: 5000 },
        new AbortController().signal,
      );
      await delivery.deliver([{ a: 1 }], 1);
      const gaps = arrivals.slice(1).map((t, i) => t - (arrivals[i] as number));
      expect(arrivals).toHaveLength(4);
      expect(gaps[0]).toBeGreaterThanOrEqual(140); // 150 ms
      expect(gaps[1]).toBeGreaterThanOrEqual(290); // 300 ms
      expect(gaps[2]).toBeGreaterThanOrEqual(990); // Retry-After: 1
    } finally {
      server.close();
    }
  });

  it('reads Retry-After as seconds or an HTTP date, and nothing else', () => {
    const now = Date.parse('2026-11-22T12:00:00Z');
    expect(retryAfter(undefined, now)).toBeUndefined();
    expect(retryAfter('', now)).toBeUndefined();
    expect(retryAfter('soon', now)).toBeUndefined();
    expect(retryAfter('3', now)).toBe(3000);
    expect(retryAfter('Sun, 22 Nov 2026 12:00:05 GMT', now)).toBe(5000);
    expect(retryAfter('Sun, 22 Nov 2026 11:00:00 GMT', now)).toBe(0);
  });
});
