import { LakeServiceError, type ErrorCode, type ServiceErrorOptions } from '../core/errors.js';

/**
 * An error the HTTP layer raises itself, with the response headers only HTTP has (Allow, the rate-limit budgets,
 * Content-Range). Domain errors never carry headers; the envelope is the same for both.
 */
export class HttpError extends LakeServiceError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>>,
    options: ServiceErrorOptions = {},
  ) {
    super(code, message, options);
  }
}
