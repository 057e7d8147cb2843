/**
 * The one error type of the domain layer. Services throw it with a stable code; the API layer alone decides the
 * HTTP status and envelope, so services stay unaware of HTTP.
 */
export { ERROR_CODES, isErrorCode, type ErrorCode } from '../../contract/errors.js';
import type { ErrorCode } from '../../contract/errors.js';

export interface ServiceErrorOptions {
  /** The input the error concerns, when it concerns exactly one. */
  param?: string;
  /** When trying again may succeed, in seconds (a limit that frees up); the API says it in Retry-After. */
  retryAfterSeconds?: number;
}

export class LakeServiceError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, options: ServiceErrorOptions = {}) {
    super(message);
    this.name = 'LakeServiceError';
    this.code = code;
    this.param = options.param;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/**
 * An error of lake's own code (reading a property of undefined, a name not defined), not of its input or of what it
 * connects to: the caller is told lake failed, and the details go to the server's log, never to a tenant.
 */
export function isProgrammingError(error: unknown): error is Error {
  return error instanceof TypeError || error instanceof ReferenceError;
}

/**
 * Such an error again, from the stack another process sent (a query worker's): isProgrammingError holds for it, and
 * the log shows the stack where it happened.
 */
export function programmingErrorFrom(stack: string): Error {
  return Object.assign(new TypeError(stack.split('\n')[0] ?? ''), { stack });
}
