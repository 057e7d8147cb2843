import { SCOPE_NAMES } from '../../contract/credentials.js';
import { LakeServiceError } from '../core/errors.js';

/**
 * Every scope a credential can hold: the contract's list (the API validates scopes against it), so the two cannot
 * drift. docs/api.md lists what each one grants.
 */
export const SCOPES = SCOPE_NAMES;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * Parses a comma- or space-separated scope list; `all` stands for every scope. Unknown names are refused with the
 * list of valid ones, since a typo would otherwise mint a token that fails later and far away.
 */
export function parseScopes(input: string | readonly string[], param = 'scopes'): Scope[] {
  const words = (typeof input === 'string' ? input.split(/[\s,]+/) : [...input]).map((w) => w.trim()).filter(Boolean);
  if (words.length === 0) {
    throw new LakeServiceError('parameter_missing', 'Name at least one scope, or `all`.', { param });
  }
  if (words.includes('all')) return [...SCOPES];
  const unknown = words.filter((w) => !isScope(w));
  if (unknown.length > 0) {
    throw new LakeServiceError(
      'parameter_invalid',
      `Unknown scope ${unknown.map((u) => `'${u}'`).join(', ')}. Valid scopes: ${SCOPES.join(', ')}, or all.`,
      { param },
    );
  }
  return [...new Set(words as Scope[])];
}
