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
  /**
   * Its organization's table-permissions switch as read with the credential, and when (epoch ms): what a request
   * decides by instead of reading it again a moment later (PermissionStore).
   */
  tablePermissions?: { enabled: boolean; readAtMs: number };
}

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.includes(scope);
}
