import type { Static } from '../../../contract/schema.js';
import type {
  Grant as GrantSchema,
  Organization as OrganizationSchema,
  User as UserSchema,
} from '../../../contract/organizations.js';
import type { Organization, User } from '../../auth/directory.js';
import type { OnboardedOwner } from '../../auth/organizations.js';
import type { Grant } from '../../auth/permissions.js';
import { patObject } from './credentials.js';

export function organizationObject(organization: Organization): Static<typeof OrganizationSchema> {
  return {
    object: 'organization',
    id: organization.id,
    name: organization.name,
    table_permissions: organization.tablePermissions,
    created: organization.created,
    deactivated: organization.deactivated,
  };
}

export function userObject(user: User): Static<typeof UserSchema> {
  return {
    object: 'user',
    id: user.id,
    organization: user.organizationId,
    name: user.name,
    email: user.email,
    role: user.role,
    created: user.created,
    deactivated: user.deactivated,
  };
}

/** A new owner with their token; the secret is in this response only. */
export function onboardedOwnerObject(owner: OnboardedOwner) {
  return {
    object: 'organization_owner' as const,
    user: userObject(owner.user),
    token: { ...patObject(owner.token.record), secret: owner.token.secret },
  };
}

export function grantObject(grant: Grant): Static<typeof GrantSchema> {
  return {
    object: 'grant',
    id: grant.id,
    schema: grant.schema,
    table: grant.table,
    grantee_kind: grant.granteeKind,
    grantee: grant.grantee,
    created: Number(grant.created),
  };
}
