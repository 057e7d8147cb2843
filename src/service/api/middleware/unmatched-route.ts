import type { Context, Hono } from 'hono';
import { LakeServiceError } from '../../core/errors.js';
import type { ApiEnv } from '../env.js';
import { HttpError } from '../http-error.js';

function patternToRegExp(path: string): RegExp {
  const escaped = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

/**
 * Distinguishes a path that exists under another method (405 with Allow) from a path that does not exist (404),
 * by reading the app's own route table, so no separate registry can drift from it.
 */
export function unmatchedRoute(app: Hono<ApiEnv>): (c: Context<ApiEnv>) => Response {
  return (c) => {
    const path = new URL(c.req.url).pathname;
    const allowed = new Set<string>();
    for (const route of app.routes) {
      if (route.method === 'ALL' || route.path.includes('*')) continue;
      if (patternToRegExp(route.path).test(path)) allowed.add(route.method);
    }
    if (allowed.size > 0) {
      if (allowed.has('GET')) allowed.add('HEAD');
      const allow = [...allowed].sort().join(', ');
      throw new HttpError('method_not_allowed', `${c.req.method} is not allowed on ${path}. Allowed: ${allow}.`, {
        Allow: allow,
      });
    }
    // The root is where people look first: it names the reference this server serves itself.
    throw new LakeServiceError(
      'route_not_found',
      path === '/'
        ? 'This is the lake API; it has no endpoint at /. Its reference is at /reference, and its OpenAPI document at /openapi.json.'
        : `There is no endpoint ${c.req.method} ${path}. The endpoints are listed at /reference (and in /openapi.json).`,
    );
  };
}
