import { LakeServiceError } from '../core/errors.js';
import type { Directory } from './directory.js';
import type { Principal } from './principal.js';

/** The id a resource records as its creator: the person behind a token, or the organization key itself. */
export function principalIdOf(principal: Principal): string {
  return principal.userId ?? principal.credentialId;
}

/** An owner of the organization, through a personal access token (organization keys are never owners). */
export async function isOrganizationOwner(directory: Directory, principal: Principal): Promise<boolean> {
  if (!principal.userId) return false;
  const user = await directory.user(principal.userId);
  return user?.organizationId === principal.organizationId && user.role === 'owner';
}

/**
 * Resources that act with their creator's rights (a send runs its SQL as its creator; a canvas's tables are read
 * by the team key) are changed only by that creator or an owner of the organization: 403 creator_required.
 */
export async function assertCreatorOrOwner(
  directory: Directory,
  principal: Principal,
  creatorId: string | null,
  what: string,
): Promise<void> {
  if (creatorId !== null && creatorId === principalIdOf(principal)) return;
  if (await isOrganizationOwner(directory, principal)) return;
  throw new LakeServiceError(
    'creator_required',
    `Only the creator of ${what} or an owner of the organization may change it.`,
  );
}

/** 403 owner_required unless the principal is an active owner of its organization, through a personal token. */
export async function assertOwner(directory: Directory, principal: Principal, doing: string): Promise<void> {
  if (await isOrganizationOwner(directory, principal)) return;
  throw new LakeServiceError(
    'owner_required',
    `Only owners of the organization, through a personal access token, may ${doing}.`,
  );
}
