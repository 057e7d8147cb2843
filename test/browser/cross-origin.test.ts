import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { overHttp, type Harness } from '../helpers/transports.js';

/** Debian's chromium (.ci/run installs it); without one this file is skipped and says so. */
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p): p is string =>
  Boolean(p && existsSync(p)),
);
if (!CHROMIUM)
  console.warn("test/browser skipped: no Chromium found (install Debian's chromium, or set CHROMIUM_PATH)");

/**
 * The page a browser client would be: on its own origin, it submits a query with fetch, follows the job's events
 * with EventSource through a stream URL, and reads the result. What it saw is left in window.__outcome.
 */
const PAGE = `<!doctype html><meta charset="utf-8"><title>lake client</title><script type="module">
const params = new URLSearchParams(location.hash.slice(1));
const api = params.get('api');
const auth = { Authorization: 'Bearer ' + params.get('token') };
try {
  const submitted = await (await fetch(api + '/queries', { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ sql: 'select 42 as answer' }) })).json();
  const stream = await (await fetch(api + '/jobs/' + submitted.id + '/stream_url', { method: 'POST', headers: auth })).json();
  const events = await new Promise((resolve, reject) => {
    const seen = [];
    const source = new EventSource(stream.url);
    for (const type of ['job.created', 'job.running', 'job.succeeded', 'job.failed']) {
      source.addEventListener(type, (e) => {
        seen.push(type);
        if (type === 'job.succeeded' || type === 'job.failed') { source.close(); resolve(seen); }
      });
    }
    source.onerror = () => { if (seen.length === 0) { source.close(); reject(new Error('EventSource failed')); } };
  });
  const result = await fetch(api + '/queries/' + submitted.id + '?format=inline&wait=5', { headers: auth });
  const body = await result.json();
  window.__outcome = { events, rows: body.data, requestId: result.headers.get('Request-Id') };
} catch (error) {
  window.__outcome = { error: String(error) };
}
</script>`;

function pageServer(): Promise<{ server: Server; origin: string }> {
  return new Promise((resolve) => {
    const server = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(PAGE)).listen(
      0,
      '127.0.0.1',
      () => {
        resolve({ server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` });
      },
    );
  });
}

describe.skipIf(!CHROMIUM)('a browser page on another origin', () => {
  let allowed: { server: Server; origin: string };
  let stranger: { server: Server; origin: string };
  let api: Harness;
  let browser: import('playwright-core').Browser;
  beforeAll(async () => {
    [allowed, stranger] = await Promise.all([pageServer(), pageServer()]);
    api = await overHttp.start({ corsOrigins: [allowed.origin] });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    allowed?.server.close();
    stranger?.server.close();
  });

  const outcome = async (origin: string): Promise<Record<string, unknown>> => {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/#api=${encodeURIComponent(api.baseUrl)}&token=${api.home.ownerToken}`);
      await page.waitForFunction(
        () => (globalThis as unknown as { __outcome?: unknown }).__outcome !== undefined,
        undefined,
        { timeout: 20_000 },
      );
      return await page.evaluate(() => (globalThis as unknown as { __outcome: Record<string, unknown> }).__outcome);
    } finally {
      await page.close();
    }
  };

  it('submits a query with fetch, follows its events with EventSource, and reads the result, when its origin is allowed', async () => {
    const seen = await outcome(allowed.origin);
    expect(seen.error).toBeUndefined();
    expect(seen.events).toEqual(expect.arrayContaining(['job.created', 'job.succeeded']));
    expect(seen.rows).toEqual([{ answer: 42 }]);
    expect(seen.requestId).toMatch(/^req_/);
  }, 60_000);

  it('gets nothing from an origin that is not allowed', async () => {
    const seen = await outcome(stranger.origin);
    expect(String(seen.error)).toMatch(/Failed to fetch/);
  }, 60_000);
});
