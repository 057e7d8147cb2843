import type { AuditLog } from './audit-log.js';
import { LakeServiceError } from '../core/errors.js';
import { assertRoomFor, DEFAULT_OBJECT_LIMITS } from '../limits/object-limits.js';
import type { CredentialRecord, CredentialStore, IssuedCredential } from './credentials.js';
import type { Principal } from './principal.js';
import { credentialName, expiryFromDays, scopesWithinCreator, type CredentialInput } from './credential-request.js';

function requireUser(principal: Principal): string {
  if (principal.userId === null) {
    throw new LakeServiceError(
      'user_required',
      'Personal access tokens belong to people; a service key cannot manage them.',
    );
  }
  return principal.userId;
}

/** A person's own personal access tokens: create (never wider than the caller's scopes), list, revoke. */
export class PersonalTokens {
  constructor(
    private readonly credentials: CredentialStore,
    private readonly audit?: AuditLog,
    /** How many active tokens a person holds (LAKE_USER_MAX_TOKENS). */
    private readonly maxTokens: number = DEFAULT_OBJECT_LIMITS.tokens,
  ) {}

  async create(principal: Principal, input: CredentialInput): Promise<IssuedCredential> {
    return this.issueFor(principal, requireUser(principal), input);
  }

  /**
   * A personal access token for a person of the principal's organization (themselves, or, for an owner, one of
   * their people): never wider than the principal's own scopes, recorded in the audit log, shown once.
   */
  async issueFor(principal: Principal, userId: string, input: CredentialInput): Promise<IssuedCredential> {
    const name = credentialName(input.name, 'token');
    const scopes = scopesWithinCreator(principal, input.scopes ?? [], 'token');
    const expires = expiryFromDays(input.expires_in_days);
    const issued = await this.credentials.withActive({ userId }, async (active) => {
      assertRoomFor('tokens', active, this.maxTokens);
      return this.credentials.issue({
        kind: 'pat',
        organizationId: principal.organizationId,
        userId,
        name,
        scopes,
        expires,
      });
    });
    await this.audit?.credentialCreated(issued.record, principal);
    return issued;
  }

  list(
    principal: Principal,
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: CredentialRecord[]; hasMore: boolean }> {
    return this.listFor(requireUser(principal), limit, startingAfter);
  }

  /** One page of a person's tokens (the caller's own, or, for an owner, one of their people's). */
  async listFor(
    userId: string,
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: CredentialRecord[]; hasMore: boolean }> {
    if (startingAfter !== undefined && !(await this.owned(userId, startingAfter))) {
      throw new LakeServiceError('invalid_cursor', 'starting_after is not a token id from a previous page.', {
        param: 'starting_after',
      });
    }
    return this.credentials.page({ userId, kind: 'pat' }, limit, startingAfter);
  }

  revoke(principal: Principal, id: string): Promise<CredentialRecord> {
    return this.revokeFor(principal, requireUser(principal), id);
  }

  /** Revokes a person's token at once (the caller's own, or, for an owner, one of their people's). */
  async revokeFor(principal: Principal, userId: string, id: string): Promise<CredentialRecord> {
    if (!(await this.owned(userId, id)))
      throw new LakeServiceError(
        'pat_not_found',
        `${userId === principal.userId ? 'You have' : 'This person has'} no personal access token '${id.slice(0, 64)}'.`,
      );
    const revoked = await this.credentials.revoke(id);
    const record = (await this.credentials.get(id)) as CredentialRecord;
    if (revoked) await this.audit?.credentialRevoked(record, principal);
    return record;
  }

  private async owned(userId: string, id: string): Promise<boolean> {
    const record = await this.credentials.get(id);
    return record !== undefined && record.kind === 'pat' && record.userId === userId;
  }
}
