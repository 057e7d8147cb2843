import type { AuditAction } from '../../contract/service.js';
import type { CredentialRecord } from './credentials.js';
import type { Directory } from './directory.js';
import type { OperatorPrincipal } from './operator-credentials.js';
import { assertOwner } from './ownership.js';
import type { Principal } from './principal.js';
import type { Clock } from '../core/clock.js';
import { LakeServiceError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { positionAfter } from '../core/page-cursor.js';
import type { AuditActor, AuditEvent, AuditFilter, AuditStore } from './audit-store.js';

/** The home's own administrator (`lake admin` on the machine that holds the home): no credential, no request. */
export const LOCAL_ADMIN: AuditActor = {
  kind: 'local_admin',
  credentialId: null,
  userId: null,
  requestId: null,
  clientAddress: null,
};

/** The actor a principal is, with the request it came in (set by the API's authentication). */
export function actorOf(principal: Principal | OperatorPrincipal): AuditActor {
  return {
    kind: principal.kind,
    credentialId: principal.credentialId,
    userId: principal.kind === 'operator' ? null : principal.userId,
    requestId: principal.origin?.requestId ?? null,
    clientAddress: principal.origin?.clientAddress ?? null,
  };
}

/**
 * The audit log: security-relevant actions (credentials made or revoked, permissions and grants, a source's
 * credentials or destination, sends), appended by the services that do them and read by the organization's
 * owners. What it records names things and never holds a secret.
 */
export class AuditLog {
  constructor(
    private readonly store: AuditStore,
    private readonly directory: Directory,
    private readonly clock: Clock,
  ) {}

  async record(
    organizationId: string | null,
    actor: AuditActor | Principal | OperatorPrincipal,
    action: AuditAction,
    target: { type: string; id: string },
    details: Record<string, unknown> = {},
  ): Promise<void> {
    await this.store.append({
      id: newId('aud'),
      organizationId,
      created: Math.floor(this.clock.now() / 1000),
      actor: 'requestId' in actor ? actor : actorOf(actor),
      action,
      target,
      details,
    });
  }

  /**
   * A credential made or revoked, recorded alike wherever it happens (the API, `lake admin`, `lake init`, a home's
   * own owner token): its name, and for a personal access token the person it belongs to; a creation also its
   * scopes and expiry. The actor is the home's own administrator unless a caller is named.
   */
  credentialCreated(
    record: CredentialRecord,
    actor: AuditActor | Principal | OperatorPrincipal = LOCAL_ADMIN,
  ): Promise<void> {
    return this.recordCredential(record, 'created', actor, { scopes: record.scopes, expires: record.expires });
  }

  credentialRevoked(
    record: CredentialRecord,
    actor: AuditActor | Principal | OperatorPrincipal = LOCAL_ADMIN,
  ): Promise<void> {
    return this.recordCredential(record, 'revoked', actor, {});
  }

  private recordCredential(
    record: CredentialRecord,
    change: 'created' | 'revoked',
    actor: AuditActor | Principal | OperatorPrincipal,
    details: Record<string, unknown>,
  ): Promise<void> {
    const person = record.userId === null ? {} : { user: record.userId };
    return this.record(
      record.organizationId,
      actor,
      `${record.kind}.${change}`,
      { type: record.kind, id: record.id },
      { name: record.name, ...details, ...person },
    );
  }

  /** What `lake admin` does on the home itself, with no credential and no request. */
  recordLocal(
    organizationId: string,
    action: AuditAction,
    target: { type: string; id: string },
    details: Record<string, unknown> = {},
  ): Promise<void> {
    return this.record(organizationId, LOCAL_ADMIN, action, target, details);
  }

  /**
   * Owners read their organization's log (it names every credential and person of it); the service operator reads
   * every organization's and the service's own, or one organization's with `organization`.
   */
  async list(
    principal: Principal | OperatorPrincipal,
    filter: AuditFilter & { organization?: string },
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: AuditEvent[]; hasMore: boolean }> {
    let organizationId = filter.organization;
    if (principal.kind !== 'operator') {
      await assertOwner(this.directory, principal, 'read its audit log');
      if (organizationId !== undefined && organizationId !== principal.organizationId)
        throw new LakeServiceError(
          'parameter_invalid',
          'An owner reads the audit log of their own organization only.',
          {
            param: 'organization',
          },
        );
      organizationId = principal.organizationId;
    }
    const after = await positionAfter(startingAfter, (id) => this.store.position(organizationId, id), 'the audit log');
    return this.store.page(organizationId, filter, limit, after);
  }
}
