import type { Context, Hono } from 'hono';
import { LakeServiceError } from '../../core/errors.js';
import type { ApiEnv } from '../env.js';
import { HttpError } from '../http-error.js';

function patternToRegExp(path: string): RegExp {
  const escaped = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  // Exactly the paths the router serves: `/sources/` is not `/sources`, so it is not said to allow what it does not.
  return new RegExp(`^${escaped}$`);
}

/** The methods the app serves at a path (HEAD wherever GET is), sorted; empty when it serves none. */
function methodsAt(app: Hono<ApiEnv>, path: string): string[] {
  const allowed = new Set<string>();
  for (const route of app.routes) {
    if (route.method === 'ALL' || route.path.includes('*')) continue;
    if (patternToRegExp(route.path).test(path)) allowed.add(route.method);
  }
  if (allowed.has('GET')) allowed.add('HEAD');
  return [...allowed].sort();
}

/** What a path with a trailing slash was likely meant as, when the path without it is an endpoint. */
function withoutTrailingSlash(app: Hono<ApiEnv>, method: string, path: string): string | undefined {
  if (path === '/' || !path.endsWith('/')) return undefined;
  const trimmed = path.replace(/\/+$/, '') || '/';
  const methods = methodsAt(app, trimmed);
  if (methods.includes(method)) return `${method} ${trimmed}, without the trailing slash, is one.`;
  return methods.length ? `${trimmed}, without the trailing slash, takes ${methods.join(', ')}.` : undefined;
}

/**
 * Distinguishes a path that exists under another method (405 with Allow) from a path that does not exist (404),
 * by reading the app's own route table, so no separate registry can drift from it.
 */
export function unmatchedRoute(app: Hono<ApiEnv>): (c: Context<ApiEnv>) => Response {
  return (c) => {
    const path = new URL(c.req.url).pathname;
    const methods = methodsAt(app, path);
    if (methods.length > 0) {
      const allow = methods.join(', ');
      throw new HttpError('method_not_allowed', `${c.req.method} is not allowed on ${path}. Allowed: ${allow}.`, {
        Allow: allow,
      });
    }
    const meant = withoutTrailingSlash(app, c.req.method, path);
    // The root is where people look first: it names the reference this server serves itself.
    throw new LakeServiceError(
      'route_not_found',
      path === '/'
        ? 'This is the lake API; it has no endpoint at /. Its reference is at /reference, and its OpenAPI document at /openapi.json.'
        : meant
          ? `There is no endpoint ${c.req.method} ${path}; ${meant}`
          : `There is no endpoint ${c.req.method} ${path}. The endpoints are listed at /reference (and in /openapi.json).`,
    );
  };
}
