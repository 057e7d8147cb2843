import { Errors } from 'typebox/schema';
import { JOB_EVENTS } from '../../src/contract/events.js';
import { ROUTES } from '../../src/contract/routes.js';
import type { RouteContract } from '../../src/contract/route.js';
import { ErrorEnvelope } from '../../src/contract/service.js';
import type { TSchema } from '../../src/contract/schema.js';

const matchers = ROUTES.map((route) => ({
  route,
  pattern: new RegExp(`^${route.path.replace(/\{\w+\}/g, '[^/]+')}$`),
}));

export function routeFor(method: string, path: string): RouteContract | undefined {
  const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  return matchers.find((m) => m.route.method === verb && m.pattern.test(path))?.route;
}

function problems(schema: TSchema, value: unknown): string | undefined {
  const [valid, errors] = Errors(schema as never, value) as unknown as [
    boolean,
    { instancePath: string; message: string; params: unknown }[],
  ];
  if (valid) return undefined;
  return errors
    .slice(0, 5)
    .map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`)
    .join('; ');
}

/**
 * Fails when a response is not what the contract says: an undocumented status, a body that does not match the
 * route's schema (a field produced but never documented, a documented one missing or mistyped), or an error body
 * outside the envelope. Every contract test's request passes through here.
 */
export async function assertMatchesContract(request: Request, response: Response): Promise<void> {
  const path = new URL(request.url).pathname;
  const route = routeFor(request.method, path);
  const where = `${request.method} ${path} → ${response.status}`;
  const type = response.headers.get('content-type') ?? '';
  if (request.method === 'OPTIONS') return;
  if (response.status >= 400) {
    if (!type.includes('application/json'))
      throw new Error(`${where}: an error answered ${type || 'no content type'}, not the JSON envelope`);
    const failure = problems(ErrorEnvelope, await response.clone().json());
    if (failure) throw new Error(`${where}: the error body breaks the envelope: ${failure}`);
    return;
  }
  if (!route) throw new Error(`${where}: no contract entry for this route`);
  const documented = route.responses[response.status];
  if (!documented)
    throw new Error(
      `${where}: status ${response.status} is not in the contract (${Object.keys(route.responses).join(', ')})`,
    );
  if (!documented.schema || !type.includes('application/json')) return;
  const body: unknown = await response.clone().json();
  const failure = problems(documented.schema, body);
  if (failure)
    throw new Error(
      `${where}: the body breaks the contract (${route.operationId}): ${failure}\n${JSON.stringify(body).slice(0, 600)}`,
    );
}

/** Fails when an event's name is not in the contract or its data does not match the event's schema. */
export function assertEventMatchesContract(event: string | undefined, data: unknown): void {
  const schema = (JOB_EVENTS as Record<string, TSchema>)[event ?? 'message'];
  if (!schema) throw new Error(`event '${event}' is not in the contract (${Object.keys(JOB_EVENTS).join(', ')})`);
  const failure = problems(schema, data);
  if (failure)
    throw new Error(`event '${event}' breaks the contract: ${failure}\n${JSON.stringify(data).slice(0, 400)}`);
}
