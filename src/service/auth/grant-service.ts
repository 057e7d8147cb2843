import { LakeServiceError } from '../core/errors.js';
import type { CredentialStore } from './credentials.js';
import { actorOf } from './audit-log.js';
import type { Directory } from './directory.js';
import { assertOwner } from './ownership.js';
import { USER_ROLES } from './people.js';
import type { Grant, GranteeKind, PermissionStore } from './permissions.js';
import type { Principal } from './principal.js';

export interface GrantInput {
  schema: string;
  /** A table or view, or `*` for the whole schema. */
  table: string;
  grantee_kind: GranteeKind;
  grantee: string;
}

const NAME = /^[^\u0000-\u001f]{1,255}$/;

/**
 * Table permissions over the API, for owners: turn them on or off, grant a table, view or schema to a person, a
 * role or a credential of the organization, list and revoke grants. The rules themselves live in PermissionStore.
 */
export class GrantService {
  constructor(
    private readonly permissions: PermissionStore,
    private readonly directory: Directory,
    private readonly credentials: CredentialStore,
  ) {}

  async enabled(principal: Principal): Promise<boolean> {
    await assertOwner(this.directory, principal, 'read table permissions');
    return this.permissions.enabled(principal.organizationId);
  }

  async setEnabled(principal: Principal, on: boolean): Promise<boolean> {
    await assertOwner(this.directory, principal, 'turn table permissions on or off');
    if ((await this.permissions.enabled(principal.organizationId)) !== on)
      await this.permissions.setEnabled(principal.organizationId, on, actorOf(principal));
    return on;
  }

  async list(principal: Principal): Promise<Grant[]> {
    await assertOwner(this.directory, principal, 'list grants');
    return this.permissions.list(principal.organizationId);
  }

  async create(principal: Principal, input: GrantInput): Promise<Grant> {
    await assertOwner(this.directory, principal, 'grant tables');
    for (const [param, value] of [
      ['schema', input.schema],
      ['table', input.table],
    ] as const)
      if (!NAME.test(value))
        throw new LakeServiceError('parameter_invalid', `${param} must be a name of 1 to 255 characters.`, { param });
    await this.assertGrantee(principal.organizationId, input.grantee_kind, input.grantee);
    return this.permissions.grant(
      principal.organizationId,
      input.schema,
      input.table,
      input.grantee_kind,
      input.grantee,
      actorOf(principal),
    );
  }

  async revoke(principal: Principal, id: string): Promise<Grant> {
    await assertOwner(this.directory, principal, 'revoke grants');
    const grant = (await this.permissions.list(principal.organizationId)).find((g) => g.id === id);
    if (!grant)
      throw new LakeServiceError('grant_not_found', `No grant '${id.slice(0, 64)}' exists in your organization.`);
    await this.permissions.revoke(
      principal.organizationId,
      grant.schema,
      grant.table,
      grant.granteeKind,
      grant.grantee,
      actorOf(principal),
    );
    return grant;
  }

  /** The grantee must be of this organization: a grant never names another's person or key. */
  private async assertGrantee(organizationId: string, kind: GranteeKind, grantee: string): Promise<void> {
    const known =
      kind === 'role'
        ? (USER_ROLES as readonly string[]).includes(grantee)
        : kind === 'user'
          ? (await this.directory.user(grantee))?.organizationId === organizationId
          : (await this.credentials.get(grantee))?.organizationId === organizationId;
    if (known) return;
    throw new LakeServiceError(
      'parameter_invalid',
      kind === 'role'
        ? `A role is one of ${USER_ROLES.join(', ')}.`
        : `No ${kind === 'user' ? 'person' : 'credential'} '${grantee.slice(0, 64)}' exists in your organization.`,
      { param: 'grantee' },
    );
  }
}
