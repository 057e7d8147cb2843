import type { Context, Hono, MiddlewareHandler } from 'hono';
import type { RouteContract, RouteInput } from '../../contract/route.js';
import { ROUTES } from '../../contract/routes.js';
import { check, shown, type Problem } from '../../contract/validate.js';
import type { Scope } from '../auth/scopes.js';
import { LakeServiceError } from '../core/errors.js';
import type { ApiEnv } from './env.js';
import { readJsonObject } from './json-body.js';
import { queryNameProblem } from './query-names.js';
import { textProblem } from './text-check.js';
import { authenticate, publicRateLimit } from './middleware/authenticate.js';

export type RouteHandler<R extends RouteContract> = (
  c: Context<ApiEnv>,
  input: RouteInput<R>,
) => Response | Promise<Response>;

/** `/queries/{id}` → `/queries/:id`. */
export const honoPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');

/** The authentication a route's contract asks for, as middleware. */
function authFor(route: RouteContract): MiddlewareHandler<ApiEnv> {
  const { auth } = route;
  if (auth.public) return publicRateLimit(auth.probe === true);
  const authenticated = authenticate({
    anyScope: auth.scopes as readonly Scope[] | undefined,
    allowTeamKey: auth.teamKey !== undefined,
    allowStreamToken: auth.streamToken,
    operator: auth.operator,
  });
  if (auth.teamKey !== 'only') return authenticated;
  return async (c, next) =>
    authenticated(c, async () => {
      if (c.get('principal').kind !== 'team_key')
        throw new LakeServiceError(
          'invalid_credentials',
          'This endpoint takes a team API key (tak_…) in the x-api-key header.',
        );
      await next();
    });
}

function refusal(route: RouteContract, problem: Problem, where: 'body' | 'query' | 'path'): LakeServiceError {
  const own = route.paramErrors?.[problem.param];
  if (own) return new LakeServiceError(own, problem.message, { param: problem.param });
  if (where === 'body' && route.invalidBodyCode && route.invalidBodyCode !== 'parameter_invalid')
    return new LakeServiceError(route.invalidBodyCode, problem.message, { param: problem.param });
  return new LakeServiceError(problem.kind === 'missing' ? 'parameter_missing' : 'parameter_invalid', problem.message, {
    param: problem.param,
  });
}

/** The routes a retry may carry an Idempotency-Key to, named where another route refuses one. */
const KEYED_ROUTES = ROUTES.filter((r) => r.requestHeaders?.includes('Idempotency-Key'))
  .map((r) => `${r.method.toUpperCase()} ${r.path}`)
  .join(', ')
  .replace(/, ([^,]*)$/, ' and $1');

type Properties = Record<string, { type?: string; anyOf?: { type?: string }[] }>;

/** Query strings are text: a parameter whose schema is a number is read as one when it looks like one. */
function queryValues(c: Context<ApiEnv>, schema: { properties: Properties }): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties)) {
    const raw = c.req.query(name);
    if (raw === undefined) continue;
    const numeric = property.type === 'integer' || property.type === 'number';
    values[name] = numeric && /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  }
  return values;
}

/**
 * Mounts a handler at its contract's method and path, behind the authentication the contract names, with path,
 * query and body checked against the contract's schemas: the handler only ever sees valid, typed input.
 */
export function mount<const R extends RouteContract>(app: Hono<ApiEnv>, route: R, handler: RouteHandler<R>): void {
  const takes = [...Object.keys(route.query?.properties ?? {}), ...(route.auth.streamToken ? ['stream_token'] : [])];
  const named = `${route.method.toUpperCase()} ${route.path}`;
  // Only a POST makes something again when repeated; a key on a safe or idempotent method is harmless.
  const refusesIdempotencyKey = route.method === 'post' && !route.requestHeaders?.includes('Idempotency-Key');
  const validated: MiddlewareHandler<ApiEnv> = async (c) => {
    const input: Record<string, unknown> = { params: c.req.param(), query: {}, body: undefined };
    const unexpected = queryNameProblem(c.req.url, named, takes);
    if (unexpected) throw refusal(route, unexpected, 'query');
    if (refusesIdempotencyKey && c.req.header('Idempotency-Key') !== undefined)
      throw new LakeServiceError(
        'parameter_invalid',
        `${named} does not take an Idempotency-Key, so a retry of it is not made safe by one: see what the first attempt made before trying again. ${KEYED_ROUTES} take one.`,
        { param: 'Idempotency-Key' },
      );
    const nulIn = textProblem(input.params, '');
    if (nulIn) throw refusal(route, nulIn, 'path');
    if (route.params) {
      const result = check(route.params, input.params);
      if (!result.ok) throw refusal(route, result.problem, 'path');
    }
    if (route.query) {
      const values = queryValues(c, route.query as unknown as { properties: Properties });
      const nulInQuery = textProblem(values, '');
      if (nulInQuery) throw refusal(route, nulInQuery, 'query');
      const result = check(route.query, values);
      if (!result.ok) throw refusal(route, result.problem, 'query');
      input.query = result.value;
    }
    if (route.body) {
      const body = await readJsonObject(c);
      const nulInBody = textProblem(body, '');
      if (nulInBody) throw refusal(route, nulInBody, 'body');
      const result = check(route.body, body);
      if (!result.ok) throw refusal(route, result.problem, 'body');
      input.body = result.value;
    } else if (route.method !== 'get') {
      // A route that takes no body: fields sent to it (a reason for a cancel, an option for a delete) are the
      // caller's mistake, said before anything happens, as an unknown field of any body is. None, or {}, is fine.
      const [field] = Object.keys(await readJsonObject(c));
      if (field !== undefined)
        throw new LakeServiceError('parameter_invalid', `Unknown field '${shown(field)}'. ${named} takes no body.`, {
          param: shown(field),
        });
    }
    return handler(c, input as unknown as RouteInput<R>);
  };
  const matched: MiddlewareHandler<ApiEnv> = async (c, next) => {
    c.set('route', route.path);
    await next();
  };
  app.on(route.method.toUpperCase(), honoPath(route.path), matched, authFor(route), validated);
}
