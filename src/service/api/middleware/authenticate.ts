import type { Context, MiddlewareHandler } from 'hono';
import { hasScope, type Principal } from '../../auth/principal.js';
import { checkStreamToken } from '../../files/url-signer.js';
import { JOB_STREAM_TIMING } from '../../jobs/stream-timing.js';
import type { Scope } from '../../auth/scopes.js';
import { LakeServiceError } from '../../core/errors.js';
import { addressBucket } from '../../net/addresses.js';
import type { ApiEnv } from '../env.js';
import { HttpError } from '../http-error.js';

export interface AuthRequirement {
  /** The caller needs at least one of these scopes; none means any valid credential will do. */
  anyScope?: readonly Scope[];
  /** Also accept a team API key in `x-api-key` (the legacy table download and whoami). */
  allowTeamKey?: boolean;
  /** The service operator's opr_ token: instead of (`only`) or beside (`also`) an organization's credentials. */
  operator?: 'only' | 'also';
  /**
   * Also accept `?stream_token=` from a stream URL made for this very path (POST …/stream_url): EventSource cannot
   * send an Authorization header.
   */
  allowStreamToken?: boolean;
}

/**
 * Requires a bearer PAT or service key. Routes declare their scopes here, so a missing scope is refused before any
 * handler runs, and the 403 names the scope to add.
 */
export function authenticate(requirement: AuthRequirement = {}): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const limiter = c.get('services').rateLimiter;
    const address = addressBudget(c);
    const wait = (await limiter?.authenticationWait(address)) ?? 0;
    if (wait > 0) {
      c.get('services').metrics.rateLimited('authentication');
      throw new LakeServiceError(
        'rate_limited',
        `Too many failed authentications from your address. Wait ${wait} s before the next attempt.`,
        { retryAfterSeconds: wait },
      );
    }
    try {
      await (requirement.operator === 'only' || (requirement.operator === 'also' && bearerIsOperator(c))
        ? authenticatedOperator(c)
        : authenticated(c, requirement));
    } catch (error) {
      if (error instanceof LakeServiceError && FAILED_AUTHENTICATION.has(error.code))
        await countFailure(c, address, error.code);
      throw error;
    }
    await next();
  };
}

/**
 * A failed authentication counts against the client's address; the one that spends its budget starts a burst,
 * which the service's audit log records (the address and the last refusal, never what was sent).
 */
async function countFailure(c: Context<ApiEnv>, address: string, code: string): Promise<void> {
  const services = c.get('services');
  if (!(await services.rateLimiter?.authenticationFailed(address))) return;
  // Each address may start a burst a minute, and addresses are many: the log keeps a bounded number a minute.
  if (!(await services.rateLimiter?.failedBurstAudited())) return;
  await services.audit.record(
    null,
    {
      kind: 'anonymous',
      credentialId: null,
      userId: null,
      requestId: c.get('requestId'),
      clientAddress: plainAddress(clientAddress(c)),
    },
    'authentication.failed_burst',
    { type: 'client_address', id: plainAddress(address) },
    { last_error: code, route: c.get('route') ?? null },
  );
}

const OPERATOR_BEARER = /^Bearer\s+opr_/i;

function bearerIsOperator(c: Context<ApiEnv>): boolean {
  return OPERATOR_BEARER.test(c.req.header('Authorization') ?? '');
}

/** The service operator's routes take its opr_ token and no other: an organization's credential is refused. */
async function authenticatedOperator(c: Context<ApiEnv>): Promise<void> {
  const secret = bearerSecret(c, 'the operator token (opr_…)');
  if (!secret.startsWith('opr_'))
    throw new LakeServiceError(
      'operator_required',
      'Only the service operator may do this, with the operator token (opr_…) lake init printed; an organization’s tokens and keys cannot.',
    );
  const operator = await c.get('services').operators.authenticate(secret);
  c.set('operator', { ...operator, origin: originOf(c) });
  await enforceRateLimit(c, operator.credentialId, undefined);
}

/** What counts as a failed authentication (a missing scope or a budget spent does not). */
const FAILED_AUTHENTICATION = new Set([
  'authentication_required',
  'invalid_credentials',
  'credentials_expired',
  'credentials_revoked',
]);

/**
 * The client's address, for limits that no credential can carry (ClientAddresses: the socket's peer, or what a
 * trusted proxy forwarded); `local` for an in-process request.
 */
export function clientAddress(c: Context<ApiEnv>): string {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return `address:${c.get('clientAddresses').of(incoming?.socket?.remoteAddress, c.req.header('x-forwarded-for'))}`;
}

/** The budget a request without a credential counts against: its address's (an IPv6 address's /64, addressBucket). */
function addressBudget(c: Context<ApiEnv>): string {
  return `address:${addressBucket(plainAddress(clientAddress(c)))}`;
}

async function authenticated(c: Context<ApiEnv>, requirement: AuthRequirement): Promise<void> {
  const apiKey = c.req.header('x-api-key');
  if (requirement.allowTeamKey && apiKey !== undefined && c.req.header('Authorization') === undefined) {
    const principal = withOrigin(c, await c.get('services').credentials.authenticate(apiKey.trim(), ['tak']));
    c.set('principal', principal);
    await enforceRateLimit(c, principal.credentialId, principal.organizationId);
    return;
  }
  const header = c.req.header('Authorization');
  const streamToken = requirement.allowStreamToken && header === undefined ? c.req.query('stream_token') : undefined;
  if (streamToken !== undefined) {
    await authorize(c, requirement, await principalOfStreamToken(c, streamToken));
    return;
  }
  const secret = bearerSecret(c, 'a pat_ or nsk_ token');
  if (secret.startsWith('opr_'))
    throw new LakeServiceError(
      'invalid_credentials',
      'The operator token (opr_…) manages organizations only (/organizations, /audit_events). Use a pat_ or nsk_ token of an organization here.',
    );
  await authorize(c, requirement, await c.get('services').credentials.authenticate(secret, ['pat', 'nsk']));
}

/** The secret of `Authorization: Bearer <token>`; a missing or malformed header is refused, naming what to send. */
function bearerSecret(c: Context<ApiEnv>, expected: string): string {
  const header = c.req.header('Authorization');
  if (!header)
    throw new LakeServiceError(
      'authentication_required',
      `No credential was sent. Send the header Authorization: Bearer <token> with ${expected}.`,
    );
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1])
    throw new LakeServiceError('invalid_credentials', 'The Authorization header must have the form: Bearer <token>.');
  return match[1];
}

async function principalOfStreamToken(c: Context<ApiEnv>, token: string): Promise<Principal> {
  const checked = checkStreamToken(c.get('services').signer, c.req.path, token);
  if (checked === 'expired')
    throw new LakeServiceError(
      'credentials_expired',
      'This stream URL has expired (they last 5 minutes). Ask for a new one with POST …/stream_url.',
    );
  if (checked === 'invalid')
    throw new LakeServiceError(
      'invalid_credentials',
      'The stream_token is not valid for this stream. Ask for a stream URL with POST …/stream_url.',
    );
  return c.get('services').credentials.principalById(checked.credentialId);
}

/** The principal may call the route: it has a scope the route needs; then its budgets are counted. */
async function authorize(c: Context<ApiEnv>, requirement: AuthRequirement, principal: Principal): Promise<void> {
  const needed = requirement.anyScope ?? [];
  if (needed.length > 0 && !needed.some((scope) => hasScope(principal, scope))) {
    const names = needed.map((s) => `'${s}'`).join(' or ');
    throw new LakeServiceError(
      'missing_scope',
      `This credential lacks the scope ${names} that this endpoint needs. Use a token that has it.`,
    );
  }
  c.set('principal', withOrigin(c, principal));
  await enforceRateLimit(c, principal.userId ?? principal.credentialId, principal.organizationId);
}

/**
 * How long a request in progress (a stream, a long poll) acts on its caller's standing as authentication read it:
 * past this it reads the caller again (callerNow) before it writes anything more. The job stream's state check.
 */
export const STANDING_TRUSTED_MS = JOB_STREAM_TIMING.pollMs;

/**
 * The caller of a request still in progress (a stream, a long poll), read again as authentication reads it: refused
 * with the same error once its credential is revoked or expired, or its organization or person deactivated.
 */
export async function callerNow(c: Context<ApiEnv>): Promise<Principal> {
  return withOrigin(c, await c.get('services').credentials.principalById(c.get('principal').credentialId));
}

/** The principal, with the request it came in: what the audit log says of an action. */
function withOrigin(c: Context<ApiEnv>, principal: Principal): Principal {
  return { ...principal, origin: originOf(c) };
}

function originOf(c: Context<ApiEnv>): { requestId: string; clientAddress: string } {
  return { requestId: c.get('requestId'), clientAddress: plainAddress(clientAddress(c)) };
}

/** The address itself, without the `address:` of its budget's key. */
const plainAddress = (address: string): string => address.replace(/^address:/, '');

/**
 * Counts the request against the caller's and the organization's budgets; over either, 429 rate_limited with the
 * exact wait in Retry-After. Every answer carries the budgets left (docs/api.md, "Rate limits").
 */
export async function enforceRateLimit(
  c: Context<ApiEnv>,
  caller: string,
  organization: string | undefined,
): Promise<void> {
  const limiter = c.get('services').rateLimiter;
  if (!limiter) return;
  const admission = await limiter.admit(caller, organization);
  const headers: Record<string, string> = {};
  if (admission.caller.remaining >= 0) {
    headers['X-RateLimit-Limit'] = String(admission.caller.limit);
    headers['X-RateLimit-Remaining'] = String(admission.caller.remaining);
  }
  if (admission.organization.remaining >= 0) {
    headers['X-RateLimit-Org-Limit'] = String(admission.organization.limit);
    headers['X-RateLimit-Org-Remaining'] = String(admission.organization.remaining);
  }
  if (!admission.allowed) {
    c.get('services').metrics.rateLimited(admission.caller.remaining === 0 ? 'caller' : 'organization');
    throw new HttpError(
      'rate_limited',
      `Too many requests. Wait ${admission.retryAfterSeconds} s before the next one.`,
      headers,
      { retryAfterSeconds: admission.retryAfterSeconds },
    );
  }
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
}

/**
 * Public endpoints (no credential) count against the budget of the client's address; a probe (a load balancer's
 * health check) counts against none, so no client's traffic can make it answer 429.
 */
export function publicRateLimit(probe = false): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    if (probe) return next();
    await enforceRateLimit(c, addressBudget(c), undefined);
    await next();
  };
}
