import type { AuditLog } from './audit-log.js';
import { LakeServiceError } from '../core/errors.js';
import type { CredentialStore, IssuedCredential } from './credentials.js';
import type { Directory, Organization, User, UserRole } from './directory.js';
import type { Principal } from './principal.js';
import type { AuditActor } from './audit-store.js';
import type { OperatorPrincipal } from './operator-credentials.js';
import { SCOPES } from './scopes.js';

export interface NewOwner {
  name: string;
  email?: string | null;
}

/** An owner made by the operator, with the token that lets them in: shown once. */
export interface OnboardedOwner {
  user: User;
  token: IssuedCredential;
}

/** The operator through the API, or `lake admin` on the server machine's home (no credential, no request). */
export type OperatorActor = OperatorPrincipal | AuditActor;

/** A new person of an organization, in its audit log as made by `actor` (an owner, or the operator for owners). */
export async function createRecordedUser(
  directory: Directory,
  audit: AuditLog,
  organizationId: string,
  actor: OperatorActor | Principal,
  person: { name: string; role: UserRole; email: string | null },
): Promise<User> {
  const user = await directory.createUser(organizationId, person.name, person.role, person.email);
  await audit.record(
    organizationId,
    actor,
    'user.created',
    { type: 'user', id: user.id },
    { name: user.name, role: user.role },
  );
  return user;
}

/** Names of organizations and people: trimmed, 1 to 200 characters. */
export function displayName(name: string, param: string, what: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > 200)
    throw new LakeServiceError('parameter_invalid', `Give the ${what} a name of 1 to 200 characters.`, { param });
  return trimmed;
}

/**
 * What the service operator does with organizations: create one (with its first owner), list, rename, deactivate
 * and reactivate them. The operator is in no organization and reads none of their data; everything inside one is
 * its owners' to manage. Each change is recorded in that organization's audit log.
 */
export class Organizations {
  constructor(
    private readonly directory: Directory,
    private readonly credentials: CredentialStore,
    private readonly audit: AuditLog,
  ) {}

  async create(
    operator: OperatorActor,
    input: { name: string; owner?: NewOwner },
  ): Promise<{ organization: Organization; owner?: OnboardedOwner }> {
    const name = displayName(input.name, 'name', 'organization');
    const ownerName = input.owner && displayName(input.owner.name, 'owner.name', 'owner');
    const organization = await this.directory.createOrganization(name);
    await this.audit.record(
      organization.id,
      operator,
      'organization.created',
      {
        type: 'organization',
        id: organization.id,
      },
      { name },
    );
    if (!input.owner || ownerName === undefined) return { organization };
    const owner = await this.onboardOwner(operator, organization, { ...input.owner, name: ownerName });
    return { organization, owner };
  }

  async get(id: string): Promise<Organization> {
    const organization = await this.directory.organization(id);
    if (!organization)
      throw new LakeServiceError('organization_not_found', `No organization '${id.slice(0, 64)}' exists.`);
    return organization;
  }

  /** A page cursor must name an organization (else 400 invalid_cursor). */
  async cursor(id: string): Promise<void> {
    if (await this.directory.organization(id)) return;
    throw new LakeServiceError('invalid_cursor', 'starting_after is not a next_cursor from a previous page.', {
      param: 'starting_after',
    });
  }

  list(limit: number, startingAfter: string | undefined): Promise<{ data: Organization[]; hasMore: boolean }> {
    return this.directory.organizationPage(limit, startingAfter);
  }

  async rename(operator: OperatorActor, id: string, name: string): Promise<Organization> {
    const before = await this.get(id);
    const renamed = displayName(name, 'name', 'organization');
    await this.directory.renameOrganization(id, renamed);
    await this.audit.record(
      id,
      operator,
      'organization.renamed',
      { type: 'organization', id },
      {
        from: before.name,
        to: renamed,
      },
    );
    return this.get(id);
  }

  /**
   * Deactivated: every credential of the organization is refused from the next request on, on every replica (the
   * check is part of authentication's one read); its tables, jobs and records are kept. Reactivating restores it.
   */
  async setDeactivated(operator: OperatorActor, id: string, deactivated: boolean): Promise<Organization> {
    const before = await this.get(id);
    if ((before.deactivated !== null) === deactivated) return before;
    await this.directory.setOrganizationDeactivated(id, deactivated);
    await this.audit.record(id, operator, deactivated ? 'organization.deactivated' : 'organization.reactivated', {
      type: 'organization',
      id,
    });
    return this.get(id);
  }

  /** Another owner, made by the operator (the first, or one to replace owners who left). */
  async addOwner(operator: OperatorActor, id: string, input: NewOwner): Promise<OnboardedOwner> {
    const organization = await this.get(id);
    return this.onboardOwner(operator, organization, { ...input, name: displayName(input.name, 'name', 'owner') });
  }

  private async onboardOwner(
    operator: OperatorActor,
    organization: Organization,
    input: NewOwner,
  ): Promise<OnboardedOwner> {
    const user = await createRecordedUser(this.directory, this.audit, organization.id, operator, {
      name: input.name,
      role: 'owner',
      email: input.email ?? null,
    });
    const token = await this.credentials.issue({
      kind: 'pat',
      organizationId: organization.id,
      userId: user.id,
      name: 'first token (from the operator)',
      scopes: SCOPES,
    });
    await this.audit.credentialCreated(token.record, operator);
    return { user, token };
  }
}
