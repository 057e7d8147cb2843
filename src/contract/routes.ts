/**
 * Every route of the API: method, path, who may call it, what it takes and what it answers. The API mounts its
 * handlers from these entries (so a route cannot exist without one), validates requests against them, and serves
 * them as the OpenAPI document; the contract tests check every response against them.
 */
import type { RouteContract } from './route.js';
import { CANVAS_ROUTES } from './routes-canvases.js';
import { CREDENTIAL_ROUTES } from './routes-credentials.js';
import { JOB_ROUTES } from './routes-jobs.js';
import { ORGANIZATION_ROUTES } from './routes-organizations.js';
import { CATALOG_ROUTES, QUERY_ROUTES } from './routes-queries.js';
import { SEND_ROUTES } from './routes-sends.js';
import { SERVICE_ROUTES } from './routes-service.js';
import { SOURCE_ROUTES } from './routes-sources.js';

export {
  CANVAS_ROUTES,
  CATALOG_ROUTES,
  CREDENTIAL_ROUTES,
  JOB_ROUTES,
  ORGANIZATION_ROUTES,
  QUERY_ROUTES,
  SEND_ROUTES,
  SERVICE_ROUTES,
  SOURCE_ROUTES,
};

const { serviceKeys, teamKeys, ...tokenRoutes } = CREDENTIAL_ROUTES;

/** Every route, in the order the document lists them. */
export const ROUTES: readonly RouteContract[] = [
  ...Object.values(SERVICE_ROUTES),
  ...Object.values(QUERY_ROUTES),
  ...Object.values(CATALOG_ROUTES),
  ...Object.values(JOB_ROUTES),
  ...Object.values(SOURCE_ROUTES),
  ...Object.values(tokenRoutes),
  ...Object.values(serviceKeys),
  ...Object.values(teamKeys),
  ...Object.values(ORGANIZATION_ROUTES),
  ...Object.values(CANVAS_ROUTES),
  ...Object.values(SEND_ROUTES),
];
