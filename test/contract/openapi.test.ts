import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/contract/errors.js';
import { JOB_EVENTS } from '../../src/contract/events.js';
import { ROUTES } from '../../src/contract/routes.js';
import { createApp } from '../../src/service/api/server/app.js';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';

const key = (method: string, path: string): string => `${method.toUpperCase()} ${path}`;
const CONTRACT = new Set(ROUTES.map((r) => key(r.method, r.path)));

describe('the contract and the app', () => {
  it('mounts exactly the routes of the contract: none without an entry, no entry without a route', async () => {
    const harness = await TRANSPORTS[0]!.start();
    try {
      const app = createApp(harness.services);
      const mounted = new Set(
        app.routes
          .filter((r) => r.method !== 'ALL' && !r.path.includes('*'))
          .map((r) => key(r.method, r.path.replace(/:(\w+)/g, '{$1}'))),
      );
      expect([...mounted].filter((r) => !CONTRACT.has(r))).toEqual([]);
      expect([...CONTRACT].filter((r) => !mounted.has(r))).toEqual([]);
    } finally {
      await harness.close();
    }
  });

  it('docs/api.md names every route of the contract, and no route that is not in it', () => {
    const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    // A route named with an example id or an ellipsis (`GET /jobs/qr_…`, `DELETE /sources…`) is prose, not a route.
    const named = new Set(
      [...doc.matchAll(/\b(GET|POST|PATCH|DELETE) (\/[\w{}/.-]*[\w}])(?![\w…/])/g)]
        .filter((m) => !/_$/.test(m[2]!))
        .map((m) => key(m[1]!, m[2]!)),
    );
    expect([...CONTRACT].filter((r) => !named.has(r))).toEqual([]);
    expect([...named].filter((r) => !CONTRACT.has(r))).toEqual([]);
  });

  it('docs/api.md names exactly the stream events of the contract (none promised that is never sent)', () => {
    const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const named = new Set([...doc.matchAll(/`((?:job|sync)\.[a-z_]+)`/g)].map((m) => m[1]!));
    expect([...named].sort()).toEqual(Object.keys(JOB_EVENTS).sort());
  });

  it("docs/api.md's error table lists every code with the contract's status and type, and no other", () => {
    const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| (\d{3}) \| ([a-z_, ]+) \| ([a-z_]+) \|/gm)];
    const documented = new Map<string, { status: number; type: string }>();
    for (const [, status, codes, type] of rows)
      for (const code of codes!.split(',').map((c) => c.trim()))
        documented.set(code, { status: Number(status), type: type! });
    expect([...documented.keys()].sort()).toEqual(Object.keys(ERROR_CATALOGUE).sort());
    for (const [code, entry] of documented)
      expect({ code, ...entry }).toEqual({
        code,
        status: ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE].status,
        type: ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE].type,
      });
  });
});

for (const transport of TRANSPORTS) {
  describe(`the OpenAPI document over '${transport.name}'`, () => {
    let harness: Harness;
    let document: Record<string, any>;
    beforeAll(async () => {
      harness = await transport.start();
      const response = await harness.request('/openapi.json', { token: null });
      expect(response.status).toBe(200);
      document = (await response.json()) as Record<string, any>;
    });
    afterAll(() => harness.close());

    it('is a valid OpenAPI 3.1 document (a standard validator accepts it)', async () => {
      const result = await new Validator().validate(structuredClone(document));
      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
      expect(document.openapi).toBe('3.1.0');
    });

    it('describes every route with its security, parameters, responses, error envelope and headers', () => {
      for (const route of ROUTES) {
        const operation = document.paths[route.path]?.[route.method];
        expect(operation, key(route.method, route.path)).toBeDefined();
        expect(operation.operationId).toBe(route.operationId);
        expect(operation.security).toEqual(route.auth.public ? [] : expect.arrayContaining([expect.any(Object)]));
        for (const name of Object.keys((route.params as any)?.properties ?? {}))
          expect(operation.parameters.some((p: any) => p.in === 'path' && p.name === name)).toBe(true);
        for (const status of Object.keys(route.responses))
          expect(operation.responses[status]?.headers?.['Request-Id']).toBeDefined();
        expect(operation.responses['429'].headers['Retry-After']).toBeDefined();
        expect(operation.responses['500'].content['application/json'].schema).toEqual({
          $ref: '#/components/schemas/ErrorEnvelope',
        });
      }
      expect(document.paths['/queries'].post.responses['202'].headers).toMatchObject({
        Location: expect.any(Object),
        'Idempotent-Replayed': expect.any(Object),
      });
      expect(document.paths['/queries'].post.parameters.map((p: any) => p.name)).toContain('Idempotency-Key');
      expect(Object.keys(document.components.securitySchemes).sort()).toEqual([
        'bearerAuth',
        'operatorToken',
        'streamToken',
        'teamApiKey',
      ]);
      expect(Object.keys(document.components.headers)).toEqual(
        expect.arrayContaining([
          'Request-Id',
          'Service-Version',
          'Location',
          'Idempotent-Replayed',
          'Retry-After',
          'X-RateLimit-Limit',
          'X-RateLimit-Remaining',
        ]),
      );
      expect(document.components.schemas.ErrorEnvelope.properties.error.properties.code).toEqual({
        $ref: '#/components/schemas/ErrorCodeName',
      });
      expect(document.components.schemas.ErrorCodeName.anyOf.map((c: any) => c.const).sort()).toEqual(
        Object.keys(ERROR_CATALOGUE).sort(),
      );
      expect(Object.keys(document.paths['/jobs/{id}/events'].get['x-lake-events'])).toContain('sync.progress');
    });

    it('feeds a client generator (openapi-typescript) without errors', async () => {
      const types = astToString(await openapiTS(structuredClone(document) as Parameters<typeof openapiTS>[0]));
      expect(types).toContain('"/queries/{id}"');
      expect(types).toMatch(/Query: \{/);
      expect(types).toContain('operations');
    });

    it('is readable at /reference: every operation on a page with no asset from anywhere else', async () => {
      const response = await harness.request('/reference', { token: null });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      const page = await response.text();
      for (const route of ROUTES) expect(page).toContain(`id="${route.operationId}"`);
      expect(page).not.toMatch(/<(script|link|img)\b[^>]*(src|href)="(https?:)?\/\//i);
    });
  });
}
