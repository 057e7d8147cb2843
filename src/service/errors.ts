/**
 * The one error type of the domain layer. Services throw it with a stable code; the API layer alone decides the
 * HTTP status and envelope, so services stay unaware of HTTP.
 */
export { ERROR_CODES, isErrorCode, type ErrorCode } from '../contract/errors.js';
import type { ErrorCode } from '../contract/errors.js';

export interface ServiceErrorOptions {
  /** The input the error concerns, when it concerns exactly one. */
  param?: string;
  /** Extra response headers the API layer should add, such as Retry-After or Allow. */
  headers?: Record<string, string>;
}

export class LakeServiceError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: ServiceErrorOptions = {}) {
    super(message);
    this.name = 'LakeServiceError';
    this.code = code;
    this.param = options.param;
    this.headers = options.headers ?? {};
  }
}
