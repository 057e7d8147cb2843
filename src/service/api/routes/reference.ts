import type { Hono } from 'hono';
import { openApiDocument } from '../../../contract/openapi.js';
import { SERVICE_ROUTES } from '../../../contract/routes.js';
import { API_VERSION, packageVersion } from '../../../support/version.js';
import { mount } from '../contract-route.js';
import type { ApiEnv } from '../env.js';
import { referencePage } from '../reference/reference-page.js';

/** The API's own description, public like /version: GET /openapi.json and a page that renders it. */
export function referenceRoutes(app: Hono<ApiEnv>): void {
  // Built on first request, not at start-up: local commands never ask for it.
  let document: Record<string, unknown> | undefined;
  let page: string | undefined;
  const built = (publicUrl: string | undefined): Record<string, unknown> =>
    (document ??= openApiDocument({ apiVersion: API_VERSION, serverVersion: packageVersion(), serverUrl: publicUrl }));

  mount(app, SERVICE_ROUTES.getOpenApiDocument, (c) => c.json(built(c.get('publicUrl'))));
  mount(app, SERVICE_ROUTES.getApiReference, (c) => c.html((page ??= referencePage(built(c.get('publicUrl'))))));
}
