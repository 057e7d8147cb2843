import { Nullable, OneOf, Strict, Timestamp, Type } from './schema.js';

export const SCOPE_NAMES = [
  'query:read',
  'data:read',
  'apps:manage',
  'jobs:read',
  'jobs:manage',
  'pats:manage',
  'keys:manage',
  'logs:read',
  'usage:read',
  'sends:read',
  'sends:manage',
  'canvases:read',
  'canvases:manage',
  'org:manage',
] as const;

export const ScopeName = OneOf(SCOPE_NAMES);

const credentialFields = {
  name: Type.String(),
  hint: Type.String({ description: 'The last four characters of the secret.' }),
  created: Timestamp,
  expires: Nullable(Timestamp),
  last_used: Nullable(Timestamp),
  revoked: Nullable(Timestamp),
};
const secret = Type.Optional(Type.String({ description: 'Only in the create response; shown once.' }));

export const PersonalAccessToken = Strict({
  object: Type.Literal('personal_access_token'),
  id: Type.String(),
  ...credentialFields,
  scopes: Type.Array(ScopeName),
  secret,
});
export const ServiceKey = Strict({
  object: Type.Literal('service_key'),
  id: Type.String(),
  ...credentialFields,
  scopes: Type.Array(ScopeName),
  secret,
});
export const TeamApiKey = Strict({
  object: Type.Literal('team_api_key'),
  id: Type.String(),
  ...credentialFields,
  secret,
});

const ExpiresInDays = Type.Optional(
  Nullable(Type.Integer({ minimum: 1, maximum: 3650, description: 'Absent or null: never expires.' })),
);
const CredentialName = Type.String({ minLength: 1, maxLength: 200 });

export const TokenCreation = Strict({
  name: CredentialName,
  scopes: Type.Array(Type.String(), { description: 'None beyond the creator’s own.' }),
  expires_in_days: ExpiresInDays,
});
export const ServiceKeyCreation = TokenCreation;
export const TeamKeyCreation = Strict({ name: CredentialName, expires_in_days: ExpiresInDays });

export const WhoAmI = Strict({
  object: Type.Literal('whoami'),
  principal_kind: Type.Union([Type.Literal('user'), Type.Literal('service_key'), Type.Literal('team_key')]),
  organization: Strict({ id: Type.String(), name: Type.String() }),
  user: Nullable(
    Strict({
      id: Type.String(),
      name: Type.String(),
      email: Nullable(Type.String()),
      role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]),
    }),
  ),
  credential: Strict({
    id: Type.String(),
    kind: Type.Union([Type.Literal('pat'), Type.Literal('service_key'), Type.Literal('team_key')]),
    name: Type.String(),
    hint: Type.String(),
    expires: Nullable(Timestamp),
  }),
  scopes: Type.Array(ScopeName),
});
