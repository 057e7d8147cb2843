import { LakeServiceError } from '../errors.js';
import type { Principal } from './principal.js';
import { parseScopes, type Scope } from './scopes.js';

/**
 * The scopes a new token or key asks for, none beyond its creator's (400 when malformed, 403 missing_scope when
 * wider). `what` names the credential in messages: "token", "key".
 */
export function scopesWithinCreator(principal: Principal, raw: unknown, what: string): Scope[] {
  if (raw === undefined) throw new LakeServiceError('parameter_missing', `List the scopes the ${what} gets.`, { param: 'scopes' });
  if (!Array.isArray(raw) || !raw.every((s) => typeof s === 'string')) {
    throw new LakeServiceError('parameter_invalid', 'scopes must be an array of scope names.', { param: 'scopes' });
  }
  const scopes = parseScopes(raw as string[]);
  const beyond = scopes.filter((s) => !principal.scopes.includes(s));
  if (beyond.length > 0) throw new LakeServiceError('missing_scope', `A ${what} cannot get scopes its creator lacks: ${beyond.join(', ')}.`, { param: 'scopes' });
  return scopes;
}

/** `expires_in_days` (1 to 3650, or absent or null for never) as an expiry in epoch seconds. */
export function expiryFromDays(days: unknown): number | null {
  if (days === undefined || days === null) return null;
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 3650) {
    throw new LakeServiceError('parameter_invalid', 'expires_in_days must be a whole number from 1 to 3650.', { param: 'expires_in_days' });
  }
  return Math.floor(Date.now() / 1000) + days * 86_400;
}
