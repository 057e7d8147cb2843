import type { AuditLog } from './audit-log.js';
import { LakeServiceError } from '../core/errors.js';
import { assertRoomFor, DEFAULT_OBJECT_LIMITS } from '../limits/object-limits.js';
import type { CredentialRecord, CredentialStore, IssuedCredential } from './credentials.js';
import type { Directory } from './directory.js';
import type { Principal } from './principal.js';
import { credentialName, expiryFromDays, scopesWithinCreator, type CredentialInput } from './credential-request.js';
import type { Scope } from './scopes.js';

export type OrgKeyKind = 'service_key' | 'team_key';

/**
 * Organization-owned keys: service keys (`nsk_…`, scoped, for automation) and team API keys (`tak_…`, legacy, for
 * POST /data/table only). Team keys are created by owners only; service keys by owners and admins. Both are shown
 * once, never stored in the clear, and revoked at once.
 */
export class OrgKeys {
  constructor(
    private readonly credentials: CredentialStore,
    private readonly directory: Directory,
    private readonly audit?: AuditLog,
    /** How many active service and team keys an organization holds (LAKE_ORG_MAX_KEYS). */
    private readonly maxKeys: number = DEFAULT_OBJECT_LIMITS.keys,
  ) {}

  async create(principal: Principal, kind: OrgKeyKind, input: CredentialInput): Promise<IssuedCredential> {
    await this.requireRole(principal, kind === 'team_key' ? ['owner'] : ['owner', 'admin']);
    const name = credentialName(input.name, 'key');
    let scopes: Scope[] = [];
    if (kind === 'service_key') scopes = scopesWithinCreator(principal, input.scopes ?? [], 'key');
    else if (input.scopes !== undefined) {
      throw new LakeServiceError(
        'parameter_invalid',
        'Team API keys have no scopes: they read canvas tables through the legacy table download only.',
        { param: 'scopes' },
      );
    }
    const expires = expiryFromDays(input.expires_in_days);
    const organizationId = principal.organizationId;
    const issued = await this.credentials.withActive({ organizationId }, async (active) => {
      assertRoomFor('keys', active, this.maxKeys);
      return this.credentials.issue({ kind, organizationId, userId: null, name, scopes, expires });
    });
    await this.audit?.credentialCreated(issued.record, principal);
    return issued;
  }

  async list(
    principal: Principal,
    kind: OrgKeyKind,
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: CredentialRecord[]; hasMore: boolean }> {
    await this.requireRole(principal, kind === 'team_key' ? ['owner'] : ['owner', 'admin']);
    if (startingAfter !== undefined) {
      const after = await this.credentials.get(startingAfter);
      if (!after || after.kind !== kind || after.organizationId !== principal.organizationId) {
        throw new LakeServiceError(
          'invalid_cursor',
          'starting_after is not a next_cursor from a previous page of these keys.',
          { param: 'starting_after' },
        );
      }
    }
    return this.credentials.page({ organizationId: principal.organizationId, kind }, limit, startingAfter);
  }

  async revoke(principal: Principal, kind: OrgKeyKind, id: string): Promise<CredentialRecord> {
    await this.requireRole(principal, kind === 'team_key' ? ['owner'] : ['owner', 'admin']);
    const record = await this.credentials.get(id);
    if (!record || record.kind !== kind || record.organizationId !== principal.organizationId) {
      throw new LakeServiceError(
        'key_not_found',
        `No ${kind === 'team_key' ? 'team API key' : 'service key'} '${id.slice(0, 64)}' exists in your organization.`,
      );
    }
    const revoked = await this.credentials.revoke(id);
    const revokedRecord = (await this.credentials.get(id)) as CredentialRecord;
    if (revoked) await this.audit?.credentialRevoked(revokedRecord, principal);
    return revokedRecord;
  }

  private async requireRole(principal: Principal, roles: readonly string[]): Promise<void> {
    const user = principal.userId ? await this.directory.user(principal.userId) : undefined;
    if (!user || !roles.includes(user.role)) {
      throw new LakeServiceError(
        'owner_required',
        `Only ${roles.join(' or ')}s of the organization, through a personal access token, may do this.`,
      );
    }
  }
}
