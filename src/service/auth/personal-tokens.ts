import { LakeServiceError } from '../errors.js';
import type { MetadataDb } from '../store/database.js';
import type { CredentialRecord, CredentialStore, IssuedCredential } from './credentials.js';
import type { Principal } from './principal.js';
import { credentialName, expiryFromDays, scopesWithinCreator, type CredentialInput } from './credential-request.js';


function requireUser(principal: Principal): string {
  if (principal.userId === null) {
    throw new LakeServiceError('user_required', 'Personal access tokens belong to people; a service key cannot manage them.');
  }
  return principal.userId;
}

/** A person's own personal access tokens: create (never wider than the caller's scopes), list, revoke. */
export class PersonalTokens {
  constructor(
    private readonly db: MetadataDb,
    private readonly credentials: CredentialStore,
  ) {}

  create(principal: Principal, input: CredentialInput): IssuedCredential {
    const userId = requireUser(principal);
    const name = credentialName(input.name, 'token');
    const scopes = scopesWithinCreator(principal, input.scopes ?? [], 'token');
    const expires = expiryFromDays(input.expires_in_days);
    return this.credentials.issue({ kind: 'pat', organizationId: principal.organizationId, userId, name, scopes, expires });
  }

  list(principal: Principal, limit: number, startingAfter: string | undefined): { data: CredentialRecord[]; hasMore: boolean } {
    const userId = requireUser(principal);
    if (startingAfter !== undefined && !this.owned(userId, startingAfter)) {
      throw new LakeServiceError('invalid_cursor', 'starting_after is not a token id from a previous page.', { param: 'starting_after' });
    }
    const ids = this.db
      .prepare(
        `SELECT id FROM credentials WHERE kind = 'pat' AND user_id = ? AND (? IS NULL OR id < ?) ORDER BY id DESC LIMIT ?`,
      )
      .all(userId, startingAfter ?? null, startingAfter ?? null, limit + 1) as { id: string }[];
    const records = ids.slice(0, limit).map(({ id }) => this.credentials.get(id) as CredentialRecord);
    return { data: records, hasMore: ids.length > limit };
  }

  revoke(principal: Principal, id: string): CredentialRecord {
    const userId = requireUser(principal);
    if (!this.owned(userId, id)) throw new LakeServiceError('pat_not_found', `You have no personal access token '${id.slice(0, 64)}'.`);
    this.credentials.revoke(id);
    return this.credentials.get(id) as CredentialRecord;
  }

  private owned(userId: string, id: string): boolean {
    const record = this.credentials.get(id);
    return record !== undefined && record.kind === 'pat' && record.userId === userId;
  }
}
