import type { MiddlewareHandler } from 'hono';
import { hasScope } from '../../auth/principal.js';
import type { Scope } from '../../auth/scopes.js';
import { LakeServiceError } from '../../errors.js';
import type { ApiEnv } from '../env.js';

export interface AuthRequirement {
  /** The caller needs at least one of these scopes; none means any valid credential will do. */
  anyScope?: readonly Scope[];
  /** Also accept a team API key in `x-api-key` (the legacy table download and whoami). */
  allowTeamKey?: boolean;
}

/**
 * Requires a bearer PAT or service key. Routes declare their scopes here, so a missing scope is refused before any
 * handler runs, and the 403 names the scope to add.
 */
export function authenticate(requirement: AuthRequirement = {}): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const apiKey = c.req.header('x-api-key');
    if (requirement.allowTeamKey && apiKey !== undefined && c.req.header('Authorization') === undefined) {
      c.set('principal', c.get('services').credentials.authenticate(apiKey.trim(), ['tak']));
      await next();
      return;
    }
    const header = c.req.header('Authorization');
    if (!header) {
      throw new LakeServiceError(
        'authentication_required',
        'No credential was sent. Send the header Authorization: Bearer <token> with a pat_ or nsk_ token.',
      );
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) {
      throw new LakeServiceError('invalid_credentials', 'The Authorization header must have the form: Bearer <token>.');
    }
    const principal = c.get('services').credentials.authenticate(match[1], ['pat', 'nsk']);
    const needed = requirement.anyScope ?? [];
    if (needed.length > 0 && !needed.some((scope) => hasScope(principal, scope))) {
      const names = needed.map((s) => `'${s}'`).join(' or ');
      throw new LakeServiceError('missing_scope', `This credential lacks the scope ${names} that this endpoint needs. Use a token that has it.`);
    }
    c.set('principal', principal);
    await next();
  };
}
