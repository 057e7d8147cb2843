import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import type { ApiEnv } from '../env.js';

/** Response headers a browser page may read: the ones docs/api.md tells clients to use. */
const EXPOSED_HEADERS = [
  'Request-Id',
  'Service-Version',
  'Location',
  'Idempotent-Replayed',
  'Retry-After',
  'Last-Event-ID',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Org-Limit',
  'X-RateLimit-Org-Remaining',
];

/**
 * Cross-origin access for browser pages on the origins an operator allows (LAKE_CORS_ORIGINS; none by default):
 * preflights are answered and responses carry Access-Control-Allow-Origin for exactly those origins. Credentials
 * travel in the Authorization header, never in cookies, so no Allow-Credentials is sent.
 */
export function corsFor(origins: readonly string[]): MiddlewareHandler<ApiEnv> {
  const allowed = new Set(origins);
  return cors({
    origin: (origin) => (allowed.has(origin) ? origin : null),
    allowMethods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'Last-Event-ID', 'x-api-key'],
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
}

/** A bad LAKE_CORS_ORIGINS entry: said at start, not discovered by a browser later. */
export class InvalidCorsOrigin extends Error {}

/**
 * LAKE_CORS_ORIGINS: comma-separated origins (`https://app.example.com`, `http://localhost:5173`), each a scheme,
 * host and optional port, exactly as a browser sends it in Origin. `*` is refused: a token-bearing API should name
 * the pages it serves.
 */
export function corsOriginsFromEnv(env: Record<string, string | undefined>): string[] {
  const origins = (env.LAKE_CORS_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      // Not a URL: refused just below with the entry named.
      parsed = undefined;
    }
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) {
      throw new InvalidCorsOrigin(
        `LAKE_CORS_ORIGINS: '${origin.slice(0, 100)}' is not an origin; write it as the browser sends it, like https://app.example.com or http://localhost:5173 (no path, no trailing slash, no *).`,
      );
    }
  }
  return origins;
}
