import { LakeServiceError } from '../core/errors.js';
import type { Principal } from './principal.js';
import { parseScopes, type Scope } from './scopes.js';

/**
 * The scopes a new token or key asks for, none beyond its creator's (400 when malformed, 403 missing_scope when
 * wider). `what` names the credential in messages: "token", "key".
 */
export function scopesWithinCreator(principal: Principal, asked: readonly string[], what: string): Scope[] {
  const scopes = parseScopes([...asked]);
  const beyond = scopes.filter((s) => !principal.scopes.includes(s));
  if (beyond.length > 0)
    throw new LakeServiceError(
      'missing_scope',
      `A ${what} cannot get scopes its creator lacks: ${beyond.join(', ')}.`,
      { param: 'scopes' },
    );
  return scopes;
}

/** A new token's or key's name, scopes (keys of a team have none) and lifetime in days (absent or null: never expires). */
export interface CredentialInput {
  name: string;
  scopes?: readonly string[];
  expires_in_days?: number | null;
}

/** The name, trimmed; 1 to 200 characters. */
export function credentialName(name: string, what: string): string {
  if (name.trim() === '' || name.length > 200)
    throw new LakeServiceError('parameter_invalid', `Give the ${what} a name of 1 to 200 characters.`, {
      param: 'name',
    });
  return name.trim();
}

/** `expires_in_days` (1 to 3650, or absent or null for never) as an expiry in epoch seconds. */
export function expiryFromDays(days: number | null | undefined): number | null {
  if (days === undefined || days === null) return null;
  return Math.floor(Date.now() / 1000) + days * 86_400;
}
