import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { LakeServiceError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import type { ApiEnv } from './env.js';
import { HttpError } from './http-error.js';
import { ERROR_CATALOGUE } from '../../contract/errors.js';
import { publicOrigin } from './request-params.js';
import { isConnectionFailure } from '../store/unavailable.js';
import { isDiskFull } from '../../support/disk-full.js';

export interface ErrorEnvelope {
  error: {
    type: string;
    code: string;
    message: string;
    param?: string;
    doc_url: string;
    request_id: string;
  };
}

/** Where an error code is explained: under the service's public origin, never an origin a request names. */
export function docUrl(c: Context<ApiEnv>, code: string): string {
  return `${publicOrigin(c)}/errors/${code}`;
}

/** Turns a domain error into the spec's envelope and status. */
export function errorResponse(c: Context<ApiEnv>, error: LakeServiceError): Response {
  const definition = ERROR_CATALOGUE[error.code];
  // Set by the outermost middleware; an answer made before it (none is, today) is not counted rather than failed.
  (c.get('services') as ApiEnv['Variables']['services'] | undefined)?.metrics.apiError(error.code);
  const body: ErrorEnvelope = {
    error: {
      type: definition.type,
      code: error.code,
      message: error.message,
      ...(error.param === undefined ? {} : { param: error.param }),
      doc_url: docUrl(c, error.code),
      request_id: c.get('requestId'),
    },
  };
  if (error instanceof HttpError) for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  if (error.retryAfterSeconds !== undefined) c.header('Retry-After', String(Math.ceil(error.retryAfterSeconds)));
  // RFC 6750: a 401 says which scheme to use, and whether the token sent was the problem.
  if (definition.status === 401)
    c.header(
      'WWW-Authenticate',
      error.code === 'authentication_required' ? 'Bearer realm="lake"' : `Bearer realm="lake", error="invalid_token"`,
    );
  return c.json(body, definition.status as ContentfulStatusCode);
}

/**
 * The last line of defence: anything that is not a domain error is logged by the server (without the request
 * body or headers) and answered with a generic 500 in the envelope, never a stack trace.
 */
export function unexpectedErrorResponse(
  c: Context<ApiEnv>,
  error: unknown,
  log: (line: object) => void,
  /** Where the log is, when the caller reads it too (local mode's home log). */
  detailsIn?: string,
): Response {
  if (error instanceof LakeServiceError) return errorResponse(c, error);
  return errorResponse(c, reportUnexpected(c, error, log, detailsIn));
}

/**
 * Logs an error that is not a domain error as the server's one JSON line (a store out of reach without details, no
 * URL; anything else with its stack, secrets redacted), and says what the caller is told of it.
 */
export function reportUnexpected(
  c: Context<ApiEnv>,
  error: unknown,
  log: (line: object) => void,
  detailsIn?: string,
): LakeServiceError {
  if (isConnectionFailure(error)) {
    // Nothing was changed; the pool reconnects by itself. Logged once per request without details (no URL).
    log({ level: 'warn', msg: 'metadata store unavailable', request_id: c.get('requestId') });
    return new LakeServiceError(
      'service_unavailable',
      'The service cannot reach its metadata store right now; nothing was changed. Retry after the time in Retry-After.',
      { retryAfterSeconds: 2 },
    );
  }
  if (isDiskFull(error)) {
    // The server's trouble, not the caller's: said as such, and retryable once space is freed.
    log({ level: 'error', msg: 'disk full', request_id: c.get('requestId') });
    return new LakeServiceError(
      'service_unavailable',
      detailsIn === undefined
        ? "The server's disk is full, so it could not complete this request. Retry after the time in Retry-After; if this persists, tell the server's operator."
        : 'The disk that holds the lake home is full, so lake could not complete this request. Free space there (lake admin gc removes what the lake no longer needs), then run the command again.',
      { retryAfterSeconds: 30 },
    );
  }
  log({
    level: 'error',
    msg: 'unhandled error',
    request_id: c.get('requestId'),
    error: error instanceof Error ? redactSecrets(error.stack ?? `${error.name}: ${error.message}`) : typeof error,
  });
  return new LakeServiceError(
    'internal_error',
    detailsIn === undefined
      ? `The service failed unexpectedly. Quote request id ${c.get('requestId')} if this persists.`
      : `The local lake failed unexpectedly; what went wrong is logged in ${detailsIn} under request id ${c.get('requestId')}.`,
  );
}
