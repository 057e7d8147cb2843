import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { API_VERSION } from '../../../support/version.js';
import type { LakeServices } from '../../assembly/services.js';
import type { ApiEnv } from '../env.js';

/** `req_` and 24 hex digits; randomUUID draws from a pre-filled entropy cache, cheaper than randomBytes per request. */
export function newRequestId(): string {
  return `req_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

/**
 * Gives each request its id and the services, and stamps Request-Id and Service-Version on every response,
 * including errors and 404s, since it runs outermost.
 */
export function requestContext(services: LakeServices): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const started = performance.now();
    const requestId = newRequestId();
    c.set('requestId', requestId);
    c.set('services', services);
    await next();
    // A path no route has is counted as one label, never as itself (a client's typo must not add a series).
    services.metrics.httpRequest(
      c.get('route') ?? 'unmatched',
      c.req.method,
      c.res.status,
      (performance.now() - started) / 1000,
    );
    c.res.headers.set('Request-Id', requestId);
    c.res.headers.set('Service-Version', API_VERSION);
    if (!c.res.headers.has('Cache-Control')) c.res.headers.set('Cache-Control', 'no-store');
  };
}
