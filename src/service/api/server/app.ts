import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { LinearRouter } from 'hono/router/linear-router';
import { LakeServiceError } from '../../core/errors.js';
import { ClientAddresses } from '../client-address.js';
import { StreamSlots } from '../stream-slots.js';
import type { LakeServices } from '../../assembly/services.js';
import type { ApiEnv } from '../env.js';
import { errorResponse, unexpectedErrorResponse } from '../error-response.js';
import { corsFor } from '../middleware/cors.js';
import { requestContext } from '../middleware/request-context.js';
import { unmatchedRoute } from '../middleware/unmatched-route.js';
import { canvasRoutes } from '../routes/canvases.js';
import { catalogRoutes } from '../routes/catalog.js';
import { keyRoutes } from '../routes/keys.js';
import { logRoutes } from '../routes/logs.js';
import { auditRoutes } from '../routes/audit.js';
import { organizationRoutes } from '../routes/organizations.js';
import { peopleRoutes } from '../routes/people.js';
import { usageRoutes } from '../routes/usage.js';
import { sendRoutes } from '../routes/sends.js';
import { fileRoutes } from '../routes/files.js';
import { jobRoutes } from '../routes/jobs.js';
import { patRoutes } from '../routes/pats.js';
import { queryRoutes } from '../routes/queries.js';
import { referenceRoutes } from '../routes/reference.js';
import { serviceInfoRoutes } from '../routes/service-info.js';
import { sourceRoutes } from '../routes/sources.js';
import { syncRoutes } from '../routes/syncs.js';

/** Request bodies larger than this are refused with 413 before they are read. */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface AppOptions {
  /** Where unexpected errors are reported; the server writes them to its log. */
  log?: (line: object) => void;
  /**
   * `one-shot` for a process that answers a handful of requests and exits (local mode): Hono's linear router
   * matches without first compiling every route into one expression (~4 ms of a local query). `lake serve` keeps
   * the default, which compiles once and matches fastest.
   */
  routing?: 'one-shot' | 'long-lived';
  /** Browser origins allowed to call the API (docs/api.md, "Browsers"); none by default. */
  corsOrigins?: readonly string[];
  /** Whose X-Forwarded-For is believed (LAKE_TRUSTED_PROXIES); nobody's by default. */
  clientAddresses?: ClientAddresses;
  /**
   * Where an unexpected error's details are logged, said in its message (local mode: the home's log file). A
   * server's caller is told only the request id: its log is the operator's.
   */
  unexpectedErrorDetails?: string;
  /** Origin for links in responses; each request's own when absent or undefined (local mode). */
  publicUrl?: () => string | undefined;
}

export type LakeApp = Hono<ApiEnv>;

/**
 * Refuses a body over MAX_BODY_BYTES. One that states its length is judged by the header alone, its stream left
 * untouched: hono's bodyLimit reaches for the stream to see whether there is a body, which ties the socket to a
 * reader no one empties when the route never reads it (a 404 or a 403 answered first), and the node adapter then
 * ended the connection half a second later, under whatever request a keep-alive client had sent on it since. A body
 * without a length (chunked) is counted as hono's bodyLimit reads it.
 */
function refuseLargeBodies(): MiddlewareHandler<ApiEnv> {
  const tooLarge = (): never => {
    throw new LakeServiceError('request_too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
  };
  const counted = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: tooLarge });
  return async (c, next) => {
    const length = c.req.header('Content-Length');
    if (length === undefined || c.req.header('Transfer-Encoding') !== undefined) return counted(c, next);
    if (Number(length) > MAX_BODY_BYTES) tooLarge();
    await next();
  };
}

/** The whole HTTP API as one Web-standard app: served over HTTP by `lake serve`, called in memory in local mode. */
export function createApp(services: LakeServices, options: AppOptions = {}): LakeApp {
  const log = options.log ?? (() => {});
  const app = options.routing === 'one-shot' ? new Hono<ApiEnv>({ router: new LinearRouter() }) : new Hono<ApiEnv>();

  const addresses = options.clientAddresses ?? new ClientAddresses([]);
  const streamSlots = new StreamSlots();
  app.use('*', requestContext(services));
  app.use('*', async (c, next) => {
    c.set('clientAddresses', addresses);
    c.set('streamSlots', streamSlots);
    c.set('log', log);
    c.set('publicUrl', options.publicUrl?.());
    await next();
  });
  if (options.corsOrigins?.length) app.use('*', corsFor(options.corsOrigins));
  app.use('*', refuseLargeBodies());
  // One-shot routing (LinearRouter) would serve `/sources/` as `/sources`; lake serve's router does not: both
  // answer a path with a trailing slash as no endpoint, naming the one without it.
  const unmatched = unmatchedRoute(app);
  app.use('*', async (c, next) => (c.req.path.length > 1 && c.req.path.endsWith('/') ? unmatched(c) : next()));

  serviceInfoRoutes(app);
  referenceRoutes(app);
  patRoutes(app);
  queryRoutes(app);
  catalogRoutes(app);
  jobRoutes(app);
  sourceRoutes(app);
  syncRoutes(app);
  keyRoutes(app);
  canvasRoutes(app);
  logRoutes(app);
  auditRoutes(app);
  organizationRoutes(app);
  peopleRoutes(app);
  usageRoutes(app);
  sendRoutes(app);
  fileRoutes(app);

  app.notFound(unmatched);
  app.onError((error, c) =>
    error instanceof LakeServiceError
      ? errorResponse(c, error)
      : unexpectedErrorResponse(c, error, log, options.unexpectedErrorDetails),
  );
  return app;
}
