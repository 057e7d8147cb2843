import type { AuditLog } from './audit-log.js';
import { LakeServiceError } from '../core/errors.js';
import type { CredentialRecord, IssuedCredential } from './credentials.js';
import type { CredentialInput } from './credential-request.js';
import type { PersonalTokens } from './personal-tokens.js';
import type { Directory, User, UserRole } from './directory.js';
import { createRecordedUser, displayName } from './organizations.js';
import { assertOwner } from './ownership.js';
import { assertRoomFor, DEFAULT_OBJECT_LIMITS } from '../limits/object-limits.js';
import type { Principal } from './principal.js';

export const USER_ROLES: readonly UserRole[] = ['owner', 'admin', 'member'];

export interface UserInput {
  name: string;
  email?: string | null;
  role?: UserRole;
}

/**
 * An organization's people, managed by its owners over the API: add, rename, change a role, deactivate and
 * reactivate, and give a person a token (shown once). An organization keeps at least one active owner. Every
 * change is in the audit log.
 */
export class People {
  constructor(
    private readonly directory: Directory,
    private readonly tokens: PersonalTokens,
    private readonly audit: AuditLog,
    /** How many active people an organization keeps (LAKE_ORG_MAX_USERS). */
    private readonly maxUsers: number = DEFAULT_OBJECT_LIMITS.users,
  ) {}

  async list(
    principal: Principal,
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: User[]; hasMore: boolean }> {
    await assertOwner(this.directory, principal, 'list its people');
    if (startingAfter !== undefined) await this.member(principal, startingAfter, 'invalid_cursor');
    return this.directory.userPage(principal.organizationId, limit, startingAfter);
  }

  async get(principal: Principal, id: string): Promise<User> {
    await assertOwner(this.directory, principal, 'read its people');
    return this.member(principal, id);
  }

  async create(principal: Principal, input: UserInput): Promise<User> {
    await assertOwner(this.directory, principal, 'add people');
    const person = {
      name: displayName(input.name, 'name', 'person'),
      role: input.role ?? 'member',
      email: input.email ?? null,
    };
    return this.directory.withActiveUsers(principal.organizationId, async (active) => {
      assertRoomFor('users', active, this.maxUsers);
      return createRecordedUser(this.directory, this.audit, principal.organizationId, principal, person);
    });
  }

  async update(principal: Principal, id: string, change: UserInput | Partial<UserInput>): Promise<User> {
    await assertOwner(this.directory, principal, 'change people');
    const before = await this.member(principal, id);
    if (change.role !== undefined && change.role !== 'owner' && before.role === 'owner' && before.deactivated === null)
      await this.assertAnotherOwner(principal.organizationId);
    const name = change.name === undefined ? undefined : displayName(change.name, 'name', 'person');
    await this.directory.updateUser(id, { name, email: change.email, role: change.role });
    const after = await this.member(principal, id);
    const details: Record<string, unknown> = {};
    if (after.role !== before.role) details.role = { from: before.role, to: after.role };
    if (after.name !== before.name) details.name = { from: before.name, to: after.name };
    if (after.email !== before.email) details.email_changed = true;
    if (Object.keys(details).length > 0)
      await this.audit.record(
        principal.organizationId,
        principal,
        after.role !== before.role ? 'user.role_changed' : 'user.updated',
        { type: 'user', id },
        details,
      );
    return after;
  }

  /** Deactivated: their tokens are refused from the next request on; what they made (sends, canvases) stays. */
  async setDeactivated(principal: Principal, id: string, deactivated: boolean): Promise<User> {
    await assertOwner(this.directory, principal, 'deactivate people');
    const before = await this.member(principal, id);
    if ((before.deactivated !== null) === deactivated) return before;
    if (deactivated && before.role === 'owner') await this.assertAnotherOwner(principal.organizationId);
    // A reactivated person counts again: deactivating and reactivating would otherwise pass the ceiling.
    if (deactivated) await this.directory.setUserDeactivated(id, true);
    else
      await this.directory.withActiveUsers(principal.organizationId, async (active) => {
        assertRoomFor('users', active, this.maxUsers);
        await this.directory.setUserDeactivated(id, false);
      });
    await this.audit.record(
      principal.organizationId,
      principal,
      deactivated ? 'user.deactivated' : 'user.reactivated',
      { type: 'user', id },
    );
    return this.member(principal, id);
  }

  /** A token for a person (a new member's first, say): never wider than the owner's own, shown once. */
  async issueToken(principal: Principal, id: string, input: CredentialInput): Promise<IssuedCredential> {
    await assertOwner(this.directory, principal, "make people's tokens");
    const user = await this.member(principal, id);
    if (user.deactivated !== null)
      throw new LakeServiceError('parameter_invalid', 'This person is deactivated; reactivate them first.', {
        param: 'id',
      });
    return this.tokens.issueFor(principal, user.id, input);
  }

  /** A person's tokens, for an owner (without secrets, with their last use). */
  async listTokens(
    principal: Principal,
    id: string,
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: CredentialRecord[]; hasMore: boolean }> {
    await assertOwner(this.directory, principal, "list people's tokens");
    const user = await this.member(principal, id);
    return this.tokens.listFor(user.id, limit, startingAfter);
  }

  /** Revokes one of a person's tokens, for an owner (a lost laptop), without deactivating the person. */
  async revokeToken(principal: Principal, id: string, tokenId: string): Promise<CredentialRecord> {
    await assertOwner(this.directory, principal, "revoke people's tokens");
    const user = await this.member(principal, id);
    return this.tokens.revokeFor(principal, user.id, tokenId);
  }

  /** A person of the caller's organization; any other id is 404, whether or not it exists elsewhere. */
  private async member(
    principal: Principal,
    id: string,
    code: 'user_not_found' | 'invalid_cursor' = 'user_not_found',
  ): Promise<User> {
    const user = await this.directory.user(id);
    if (user?.organizationId === principal.organizationId) return user;
    if (code === 'invalid_cursor')
      throw new LakeServiceError('invalid_cursor', 'starting_after is not a next_cursor from a previous page.', {
        param: 'starting_after',
      });
    throw new LakeServiceError('user_not_found', `No person '${id.slice(0, 64)}' exists in your organization.`);
  }

  private async assertAnotherOwner(organizationId: string): Promise<void> {
    if ((await this.directory.activeOwnerCount(organizationId)) > 1) return;
    throw new LakeServiceError(
      'last_owner',
      'This is the organization’s last active owner. Make someone else an owner first.',
    );
  }
}
