import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/contract/errors.js';
import { ROUTES } from '../../src/contract/routes.js';
import type { RouteContract } from '../../src/contract/route.js';
import type { Json } from '../helpers/queries.js';
import { overHttp, type Harness } from '../helpers/transports.js';

/**
 * Every route of the contract, called with what a hostile or careless client sends: odd ids, odd query values and
 * bodies of the wrong shape. Each must end in a clear error in the envelope (or a correct answer), never a 500, a
 * hang or a code the catalogue does not know.
 */
const ODD_IDS = [
  'x'.repeat(5_000),
  '%F0%9F%92%A9',
  '..%2F..%2Fetc%2Fpasswd',
  "x'%20OR%20'1'='1",
  '%E0%A4%A',
  '%20',
  'qr_%FF%FE',
  '-1',
];
const ODD_QUERY_VALUES = ['-1', '1e309', 'abc', 'x'.repeat(5_000), '[]', '%00', '0x10', 'true'];
const deep = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);
const ODD_BODIES: readonly string[] = [
  '[]',
  'null',
  '"text"',
  '12',
  '{"__proto__": {"admin": true}}',
  '{"constructor": {"prototype": {"x": 1}}}',
  deep(100_000),
  `{"name": ${deep(50_000)}}`,
  '{"name": 1e309, "sql": ["select 1"], "limit": -5}',
  '{"name": "\\ud800", "sql": "select \\udfff"}',
];

const pathWith = (route: RouteContract, id: string): string => route.path.replace(/\{[a-z_]+\}/g, id);

type Schema = Record<string, any>;

/** The smallest value a schema accepts (the first branch of a union, each required property). */
function sample(schema: Schema): unknown {
  if ('const' in schema) return schema.const;
  if (schema.anyOf) return sample(schema.anyOf[0]);
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'object':
      return Object.fromEntries(
        (schema.required ?? []).map((name: string) => [name, sample(schema.properties[name] as Schema)]),
      );
    case 'array':
      return [];
    case 'string':
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    default:
      return null;
  }
}

/** Values of the wrong kind or at the edges, for any field. */
const ODD_VALUES: readonly unknown[] = [
  'x'.repeat(300_000),
  '\u0000',
  '\ud800',
  -1,
  1e308,
  2 ** 63,
  0.5,
  [],
  [[[[[[[[[[]]]]]]]]]],
  {},
  { __proto__: { admin: true } },
  null,
  true,
  ' ',
  '../../etc/passwd',
  'select 1; drop table x',
];

describe('every route against odd input', () => {
  let api: Harness;
  let operator: string;
  beforeAll(async () => {
    api = await overHttp.start();
    operator = (await api.services.operators.issue('fuzz')).secret;
    const make = async (path: string, body: unknown, token?: string): Promise<string> => {
      const response = await api.request(path, {
        method: 'POST',
        token,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(201);
      return ((await response.json()) as Json).id as string;
    };
    realIds.sources = await make('/sources', { connector: 'sample', name: 'fuzzed' });
    realIds.sends = await make('/sends', { name: 'fuzzed', ...VALID.createSend });
    realIds.canvases = await make('/canvases', { name: 'fuzzed' });
    realIds.users = await make('/users', { name: 'Fuzzed' });
    realIds.organizations = await make('/organizations', { name: 'Fuzzed' }, operator);
  });
  afterAll(async () => {
    await api.close();
  });

  const expectClear = async (response: Response, what: string): Promise<void> => {
    const type = response.headers.get('content-type') ?? '';
    const text = await response.text();
    expect(response.status, `${what}: ${text.slice(0, 300)}`).toBeLessThan(500);
    if (response.status < 400) return;
    expect(type, what).toMatch(/application\/json/);
    const body = JSON.parse(text) as Json;
    expect(Object.keys(ERROR_CATALOGUE), `${what}: ${text.slice(0, 300)}`).toContain(body.error.code);
    expect(body.error.request_id, what).toBe(response.headers.get('request-id'));
    expect(text, what).not.toMatch(/at .*\.(ts|js):\d+|node:internal/);
  };
  const tokenFor = (route: RouteContract): string | undefined =>
    route.auth.operator === 'only' ? operator : undefined;
  const routes = ROUTES;
  /** Bodies that pass validation, so each odd field reaches the service behind it. */
  const VALID: Record<string, Record<string, unknown>> = {
    createQuery: { sql: 'select 1 as n' },
    createSource: { connector: 'sample' },
    createGrant: { grantee_kind: 'role', grantee: 'member' },
    createPersonalAccessToken: { scopes: ['query:read'] },
    createServiceKey: { scopes: ['query:read'] },
    createUserToken: { scopes: ['query:read'] },
    addCanvasElement: { sql: 'select 1 as n' },
    createSend: { sql: 'select 1 as n', destination: { type: 'webhook', url: 'http://127.0.0.1:9/hook' } },
  };
  /** A real object behind each kind of path, so a body reaches what it changes. */
  const realIds: Record<string, string> = {};

  it('refuses odd ids in every path clearly', async () => {
    for (const route of routes.filter((r) => r.path.includes('{')))
      for (const id of ODD_IDS) {
        const response = await api.request(pathWith(route, id), {
          method: route.method.toUpperCase(),
          token: tokenFor(route),
          ...(route.body ? { headers: { 'Content-Type': 'application/json' }, body: '{}' } : {}),
          signal: AbortSignal.timeout(10_000),
        });
        await expectClear(response, `${route.method} ${route.path} with ${id.slice(0, 40)}`);
      }
  }, 120_000);

  it('refuses odd query values clearly', async () => {
    for (const route of routes.filter((r) => r.query && !r.path.includes('{')))
      for (const name of Object.keys(route.query?.properties ?? {}))
        for (const value of ODD_QUERY_VALUES) {
          const response = await api.request(`${route.path}?${name}=${encodeURIComponent(value)}`, {
            method: route.method.toUpperCase(),
            token: tokenFor(route),
            signal: AbortSignal.timeout(10_000),
          });
          await expectClear(response, `${route.method} ${route.path}?${name}=${value.slice(0, 40)}`);
        }
  }, 120_000);

  it('refuses every field of every body given an odd value clearly', async () => {
    for (const route of routes.filter((r) => r.body && (r.body as Schema).type === 'object')) {
      const schema = route.body as Schema;
      const valid = { ...(sample(schema) as Record<string, unknown>), ...VALID[route.operationId] };
      for (const field of Object.keys(schema.properties ?? {}))
        for (const value of ODD_VALUES) {
          const response = await api.request(pathWith(route, realIds[route.path.split('/')[1] ?? ''] ?? 'x'), {
            method: route.method.toUpperCase(),
            token: tokenFor(route),
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ ...valid, [field]: value }),
            signal: AbortSignal.timeout(20_000),
          });
          await expectClear(
            response,
            `${route.method} ${route.path} with ${field}=${JSON.stringify(value).slice(0, 40)}`,
          );
        }
    }
  }, 300_000);

  it('refuses bodies of the wrong shape clearly', async () => {
    for (const route of routes.filter((r) => r.body && !r.path.includes('{')))
      for (const body of ODD_BODIES) {
        const response = await api.request(route.path, {
          method: route.method.toUpperCase(),
          token: tokenFor(route),
          headers: { 'Content-Type': 'application/json' },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        await expectClear(response, `${route.method} ${route.path} with ${body.slice(0, 40)}`);
      }
  }, 120_000);
});
