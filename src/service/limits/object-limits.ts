import { LakeServiceError } from '../core/errors.js';
import { wholeNumberSetting } from '../core/env-values.js';
import { groupDigits } from '../../support/group-digits.js';

/**
 * The kinds of object a tenant creates and keeps: each is a row every listing, scheduler round or check of its
 * organization reads, in the metadata store every organization shares, so each has a ceiling.
 */
export type LimitedObject = 'sources' | 'sends' | 'canvases' | 'users' | 'keys' | 'grants' | 'tokens';

/** How many of each an organization (tokens: one person) may keep at once. */
export type ObjectLimits = Record<LimitedObject, number>;

interface LimitRule {
  variable: string;
  fallback: number;
  /** What is counted, as the refusal names one and many. */
  counted: [string, string];
  /** Who keeps them, as the refusal addresses it. */
  holder: 'Your organization' | 'You';
  /** What makes room. */
  remedy: string;
}

const RULES: Record<LimitedObject, LimitRule> = {
  sources: {
    variable: 'LAKE_ORG_MAX_SOURCES',
    fallback: 1_000,
    counted: ['source', 'sources'],
    holder: 'Your organization',
    remedy: 'Delete a source it no longer syncs',
  },
  sends: {
    variable: 'LAKE_ORG_MAX_SENDS',
    fallback: 1_000,
    counted: ['send', 'sends'],
    holder: 'Your organization',
    remedy: 'Delete a send it no longer needs',
  },
  canvases: {
    variable: 'LAKE_ORG_MAX_CANVASES',
    fallback: 1_000,
    counted: ['canvas', 'canvases'],
    holder: 'Your organization',
    remedy: 'Delete a canvas it no longer shows',
  },
  users: {
    variable: 'LAKE_ORG_MAX_USERS',
    fallback: 10_000,
    counted: ['active person', 'active people'],
    holder: 'Your organization',
    remedy: 'Deactivate someone who has left',
  },
  keys: {
    variable: 'LAKE_ORG_MAX_KEYS',
    fallback: 500,
    counted: ['active service or team key', 'active service and team keys'],
    holder: 'Your organization',
    remedy: 'Revoke a key no longer used',
  },
  grants: {
    variable: 'LAKE_ORG_MAX_GRANTS',
    fallback: 10_000,
    counted: ['table grant', 'table grants'],
    holder: 'Your organization',
    remedy: "Revoke grants no longer needed (a grant of a schema's `*` covers all its tables)",
  },
  tokens: {
    variable: 'LAKE_USER_MAX_TOKENS',
    fallback: 100,
    counted: ['active personal access token', 'active personal access tokens'],
    holder: 'You',
    remedy: 'Revoke a token no longer used',
  },
};

/** The largest ceiling a variable may set: beyond it the rows themselves become the problem the ceiling prevents. */
const MAX_LIMIT = 1_000_000;

export const DEFAULT_OBJECT_LIMITS: ObjectLimits = Object.fromEntries(
  Object.entries(RULES).map(([kind, rule]) => [kind, rule.fallback]),
) as ObjectLimits;

/** The ceilings from the environment (the variables of RULES); a bad value is an error at start. */
export function objectLimitsFromEnv(env: Record<string, string | undefined>): ObjectLimits {
  return Object.fromEntries(
    Object.entries(RULES).map(([kind, rule]) => [
      kind,
      wholeNumberSetting(env, rule.variable, rule.fallback, MAX_LIMIT, 1),
    ]),
  ) as ObjectLimits;
}

/** Refuses one more object of a kind when `kept` have reached its `limit`: 409 `object_limit_reached`. */
export function assertRoomFor(kind: LimitedObject, kept: number, limit: number): void {
  if (kept >= limit) throw objectLimitReached(kind, kept, limit);
}

/** The refusal of one more object of a kind, `kept` of which have reached its `limit`. */
export function objectLimitReached(kind: LimitedObject, kept: number, limit: number): LakeServiceError {
  const rule = RULES[kind];
  return new LakeServiceError(
    'object_limit_reached',
    `${rule.holder} already ${rule.holder === 'You' ? 'have' : 'has'} ${groupDigits(kept)} ${rule.counted[kept === 1 ? 0 : 1]}, the most this server allows (${groupDigits(limit)}, ${rule.variable}). ${rule.remedy}, or ask the server's operator to raise the limit.`,
  );
}
