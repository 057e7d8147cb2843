import type { PatObject, ServiceKeyObject, TeamApiKeyObject } from '../../../contract/types.js';
import type { CredentialRecord } from '../../auth/credentials.js';

/** A personal access token, never its secret (the create response adds that once). */
export function patObject(record: CredentialRecord): PatObject {
  return {
    object: 'personal_access_token',
    id: record.id,
    name: record.name,
    hint: record.secretHint,
    scopes: record.scopes,
    created: record.created,
    expires: record.expires,
    last_used: record.lastUsed,
    revoked: record.revoked,
  };
}

/** A service key or team API key; only service keys have scopes. */
export function keyObject(record: CredentialRecord): ServiceKeyObject | TeamApiKeyObject {
  const common = {
    id: record.id,
    name: record.name,
    hint: record.secretHint,
    created: record.created,
    expires: record.expires,
    last_used: record.lastUsed,
    revoked: record.revoked,
  };
  if (record.kind === 'team_key') return { object: 'team_api_key', ...common };
  return { object: 'service_key', ...common, scopes: record.scopes };
}
