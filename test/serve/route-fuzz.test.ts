import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHome } from '../../src/service/home/home.js';
import { keepAliveClient } from '../helpers/keep-alive.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

/** Ids a caller may put in a path: not an id, a traversal, an emoji, a broken percent-escape. */
const ODD_IDS = ['x', '..%2F..%2Fetc%2Fpasswd', '%F0%9F%98%80', '%E0%A4%A'];
const ODD_QUERIES = ['', '?limit=-1', '?limit=abc&limit=2', '?starting_after=%00', '?created_after=notadate&wait=1e9'];
const ODD_BODIES = [
  '',
  'null',
  '[]',
  '{',
  `{"a":${'['.repeat(3000)}${']'.repeat(3000)}}`,
  JSON.stringify({ name: 'n'.repeat(200_000) }),
  '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}',
  JSON.stringify({ sql: 'select ?', parameters: [{ value: { a: 1 }, type: 'DECIMAL(99,99)' }], tags: [1] }),
];

/**
 * Every route of the OpenAPI document, called with odd ids, query strings and bodies, all over one keep-alive
 * connection: each answer is a success or the error envelope (never a 5xx, a stack, a path of the server's, or
 * silence), and no request is cut off by its connection closing (a route that left a body unread once reset it).
 */
describe('every route of lake serve against odd input', () => {
  let server: ServeProcess;
  let token: string;
  beforeAll(async () => {
    const homeDir = join(tempDir('lake-route-fuzz'), 'home');
    const home = await openHome(homeDir);
    token = home.ownerToken;
    await home.close();
    server = await startServeProcess({
      LAKE_HOME: homeDir,
      LAKE_RATE_LIMIT_PER_CALLER: '1000000',
      LAKE_RATE_LIMIT_PER_ORG: '1000000',
    });
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('answers each in the envelope, on one connection', async () => {
    const { send, sockets, close } = keepAliveClient(server.url, token);
    const spec = JSON.parse((await send('GET', '/openapi.json')).body) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const wrong: string[] = [];
    let sent = 0;
    try {
      for (const [template, operations] of Object.entries(spec.paths)) {
        // The fuzz's own credential must outlive it; what revokes or deactivates is tested where it is built.
        if (/revoke|deactivate/.test(template)) continue;
        const paths = template.includes('{') ? ODD_IDS.map((id) => template.replace(/\{[^}]+\}/g, id)) : [template];
        for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
          for (const path of paths) {
            const calls: [string, string | undefined][] = [
              ...ODD_QUERIES.map((query): [string, string | undefined] => [
                path + query,
                method === 'GET' ? undefined : '{}',
              ]),
              ...(method === 'GET' ? [] : ODD_BODIES.map((body): [string, string | undefined] => [path, body])),
            ];
            for (const [target, body] of calls) {
              const answer = await send(method, target, body);
              sent++;
              const where = `${method} ${target.slice(0, 80)} ${String(body).slice(0, 40)} -> ${answer.status}`;
              if (answer.status >= 500) wrong.push(`${where}: ${answer.body.slice(0, 200)}`);
              // (Documents such as /openapi.json describe paths and errors in their own words: errors are checked.)
              if (answer.status >= 400 && /\bat [\w.<>]+ \(|node:internal|\/dist\/|\/src\//.test(answer.body))
                wrong.push(`${where}: a stack`);
              if (answer.status >= 400 && !/^\{"error":\{/.test(answer.body)) wrong.push(`${where}: not the envelope`);
            }
          }
        }
      }
    } finally {
      close();
    }
    expect(wrong).toEqual([]);
    expect(sent).toBeGreaterThan(1000);
    // A socket ended under a request fails that request (ECONNRESET) above; one the server closed on purpose says so
    // (Connection: close) and the agent opens another: a few at most.
    expect(sockets.size).toBeLessThan(5);
  }, 120_000);
});
