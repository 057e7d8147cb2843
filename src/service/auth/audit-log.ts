import type { Directory } from './directory.js';
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
export function actorOf(principal: Principal): AuditActor {
  return {
    kind: principal.kind,
    credentialId: principal.credentialId,
    userId: principal.userId,
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
    organizationId: string,
    actor: AuditActor | Principal,
    action: string,
    target: { type: string; id: string },
    details: Record<string, unknown> = {},
  ): Promise<void> {
    await this.store.append({
      id: newId('aud'),
      organizationId,
      created: Math.floor(this.clock.now() / 1000),
      actor: 'credentialKind' in actor ? actorOf(actor) : actor,
      action,
      target,
      details,
    });
  }

  /** What `lake admin` does on the home itself, with no credential and no request. */
  recordLocal(
    organizationId: string,
    action: string,
    target: { type: string; id: string },
    details: Record<string, unknown> = {},
  ): Promise<void> {
    return this.record(organizationId, LOCAL_ADMIN, action, target, details);
  }

  /** Owners only: the log names every credential and person of the organization. */
  async list(
    principal: Principal,
    filter: AuditFilter,
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: AuditEvent[]; hasMore: boolean }> {
    const user = principal.userId ? await this.directory.user(principal.userId) : undefined;
    if (user?.role !== 'owner' || user.organizationId !== principal.organizationId)
      throw new LakeServiceError(
        'owner_required',
        'Only owners of the organization, through a personal access token, may read its audit log.',
      );
    const after = await positionAfter(
      startingAfter,
      (id) => this.store.position(principal.organizationId, id),
      'the audit log',
    );
    return this.store.page(principal.organizationId, filter, limit, after);
  }
}
