import type { Hono } from 'hono';
import type {
  ErrorCodeObject,
  HealthObject,
  ReadinessObject,
  VersionObject,
  WhoAmIObject,
} from '../../../contract/types.js';
import { API_VERSION, packageVersion } from '../../../support/version.js';
import { isErrorCode, LakeServiceError } from '../../core/errors.js';
import type { ApiEnv } from '../env.js';
import { docUrl } from '../error-response.js';
import { ERROR_CATALOGUE } from '../../../contract/errors.js';
import { SERVICE_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';

const {
  getVersion: version,
  getHealth: health,
  getReadiness: readiness,
  whoAmI,
  getErrorCode: errorCode,
} = SERVICE_ROUTES;

export function serviceInfoRoutes(app: Hono<ApiEnv>): void {
  mount(app, version, (c) =>
    c.json({ object: 'version', version: API_VERSION, server_version: packageVersion() } satisfies VersionObject),
  );

  mount(app, health, (c) => c.json({ object: 'health', status: 'ok' } satisfies HealthObject));
  mount(app, readiness, async (c) => {
    await c.get('services').assertReady();
    return c.json({ object: 'readiness', status: 'ready' } satisfies ReadinessObject);
  });

  mount(app, whoAmI, async (c) => {
    const principal = c.get('principal');
    const { directory, credentials } = c.get('services');
    const organization = await directory.organization(principal.organizationId);
    const user = principal.userId ? await directory.user(principal.userId) : undefined;
    const credential = await credentials.get(principal.credentialId);
    // Both were there when the request was authenticated; gone since, the credential no longer stands.
    if (!organization || !credential)
      throw new LakeServiceError('invalid_credentials', 'This credential no longer exists.');
    return c.json({
      object: 'whoami',
      principal_kind: principal.kind,
      organization: { id: organization.id, name: organization.name },
      user: user ? { id: user.id, name: user.name, email: user.email, role: user.role } : null,
      credential: {
        id: credential.id,
        kind: credential.kind,
        name: credential.name,
        hint: credential.secretHint,
        expires: credential.expires,
      },
      scopes: [...principal.scopes],
    } satisfies WhoAmIObject);
  });

  // Public, so that the doc_url of every error resolves without a credential.
  mount(app, errorCode, (c, { params: { code } }) => {
    if (!isErrorCode(code))
      throw new LakeServiceError('error_code_not_found', `There is no error code '${code.slice(0, 64)}'.`, {
        param: 'code',
      });
    const definition = ERROR_CATALOGUE[code];
    return c.json({
      object: 'error_code',
      code,
      status: definition.status,
      type: definition.type,
      description: definition.description,
      doc_url: docUrl(c, code),
    } satisfies ErrorCodeObject);
  });
}
