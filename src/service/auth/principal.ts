import type { Scope } from './scopes.js';

export type PrincipalKind = 'user' | 'service_key' | 'team_key';
export type CredentialKind = 'pat' | 'service_key' | 'team_key';

/** Who is calling, as established by a credential. Every domain service receives one. */
export interface Principal {
  kind: PrincipalKind;
  organizationId: string;
  /** The person behind a personal access token; null for organization-owned keys. */
  userId: string | null;
  credentialId: string;
  credentialKind: CredentialKind;
  scopes: readonly Scope[];
  /** The API request it came in (what the audit log records); absent for work of lake's own. */
  origin?: { requestId: string; clientAddress: string };
}

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.includes(scope);
}
