import type { Scope } from '../../src/service/auth/scopes.js';
import type { Harness } from './transports.js';

/** A member of the harness's organization (role member) and a personal access token of theirs with these scopes. */
export async function newMember(
  api: Harness,
  scopes: Scope[],
): Promise<{ userId: string; token: string; credentialId: string }> {
  const organizationId = api.home.organization.id;
  const user = await api.home.directory.createUser(organizationId, 'Member', 'member');
  const { secret, record } = await api.home.credentials.issue({
    kind: 'pat',
    organizationId,
    userId: user.id,
    name: 'm',
    scopes,
  });
  return { userId: user.id, token: secret, credentialId: record.id };
}
