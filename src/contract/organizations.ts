/** Organizations (the service operator's) and their people, grants and table permissions (their owners'). */
import { PersonalAccessToken } from './credentials.js';
import { Nullable, OneOf, Strict, Timestamp, Type } from './schema.js';

export const ROLE_NAMES = ['owner', 'admin', 'member'] as const;
const Role = OneOf(ROLE_NAMES);
const DisplayName = Type.String({ minLength: 1, maxLength: 200 });
const Email = Nullable(Type.String({ maxLength: 320 }));

export const Organization = Strict({
  object: Type.Literal('organization'),
  id: Type.String(),
  name: Type.String(),
  table_permissions: Type.Boolean(),
  created: Timestamp,
  deactivated: Nullable(
    Type.Integer({ minimum: 0, description: 'When the operator deactivated it (epoch seconds); null while active.' }),
  ),
});

export const User = Strict({
  object: Type.Literal('user'),
  id: Type.String(),
  organization: Type.String(),
  name: Type.String(),
  email: Email,
  role: Role,
  created: Timestamp,
  deactivated: Nullable(
    Type.Integer({ minimum: 0, description: 'When an owner deactivated them (epoch seconds); null while active.' }),
  ),
});

/** A new owner, with the token that lets them in: its secret is in this response only. */
export const OnboardedOwner = Strict({
  object: Type.Literal('organization_owner'),
  user: User,
  token: PersonalAccessToken,
});

export const OrganizationCreated = Strict({
  ...Organization.properties,
  owner: Type.Optional(OnboardedOwner),
});

export const NewOwner = Strict({ name: DisplayName, email: Type.Optional(Email) });
export const OrganizationCreation = Strict({ name: DisplayName, owner: Type.Optional(NewOwner) });
export const OrganizationUpdate = Strict({ name: DisplayName });

export const UserCreation = Strict({ name: DisplayName, email: Type.Optional(Email), role: Type.Optional(Role) });
export const UserUpdate = Strict({
  name: Type.Optional(DisplayName),
  email: Type.Optional(Email),
  role: Type.Optional(Role),
});

const GranteeKind = OneOf(['user', 'role', 'credential'] as const);
export const Grant = Strict({
  object: Type.Literal('grant'),
  id: Type.String(),
  schema: Type.String(),
  table: Type.String({ description: 'A table or view, or * for the whole schema.' }),
  grantee_kind: GranteeKind,
  grantee: Type.String({ description: 'A usr_ id, a role name, or a tok_/key_ credential id.' }),
  created: Timestamp,
});
export const GrantCreation = Strict({
  schema: Type.String({ minLength: 1, maxLength: 255 }),
  table: Type.String({ minLength: 1, maxLength: 255, description: 'A table or view, or * for the whole schema.' }),
  grantee_kind: GranteeKind,
  grantee: Type.String({ minLength: 1, maxLength: 64 }),
});

export const TablePermissions = Strict({
  object: Type.Literal('table_permissions'),
  enabled: Type.Boolean({ description: 'On: people read only what grants allow them (owners read everything).' }),
});
export const TablePermissionsUpdate = Strict({ enabled: Type.Boolean() });
