/**
 * The one error type of the domain layer. Services throw it with a stable code; the API layer alone decides the
 * HTTP status and envelope, so services stay unaware of HTTP.
 */
export const ERROR_CODES = [
  // request shape
  'route_not_found',
  'method_not_allowed',
  'invalid_json',
  'invalid_content_type',
  'request_too_large',
  'parameter_missing',
  'parameter_invalid',
  // authentication and authorization
  'authentication_required',
  'invalid_credentials',
  'credentials_expired',
  'credentials_revoked',
  'missing_scope',
  'user_required',
  'owner_required',
  'creator_required',
  'key_not_found',
  'canvas_not_found',
  'element_not_found',
  'element_query_failed',
  'pat_not_found',
  // queries (spec)
  'write_not_allowed',
  'multiple_statements',
  'forbidden_function',
  'sql_too_long',
  'invalid_format',
  'invalid_cursor',
  'signed_url_invalid',
  'signed_url_expired',
  'range_not_satisfiable',
  'query_not_found',
  'too_many_queries',
  'result_storage_full',
  'inline_row_too_large',
  'idempotency_key_reused',
  // catalog, sources, jobs (spec)
  'grant_table_denied',
  'service_key_permissions_off',
  'grant_introspection_denied',
  'catalog_not_found',
  'invalid_source_parameters',
  'source_not_found',
  'source_name_conflict',
  'host_not_allowed',
  'malformed_request',
  'headers_too_large',
  'source_config_unavailable',
  'source_pause_failed',
  'source_paused',
  'sync_in_progress',
  'job_not_found',
  'job_not_cancellable',
  'job_not_finished',
  'job_has_no_result',
  'invalid_last_event_id',
  // sends
  'send_not_found',
  'send_run_not_found',
  'send_paused',
  'send_in_progress',
  // service
  'rate_limited',
  'error_code_not_found',
  'internal_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export function isErrorCode(value: string): value is ErrorCode {
  return (ERROR_CODES as readonly string[]).includes(value);
}

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
