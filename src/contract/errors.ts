/**
 * Every error code of the API with its status, type and explanation: the envelope's `code` enum in the OpenAPI
 * document, GET /errors/{code}, and the domain's one error type all read it from here.
 */
export type ErrorType =
  'invalid_request_error' | 'authentication_error' | 'permission_error' | 'rate_limit_error' | 'api_error';

export interface ErrorDefinition {
  status: number;
  type: ErrorType;
  description: string;
}

export const ERROR_CATALOGUE = {
  route_not_found: {
    status: 404,
    type: 'invalid_request_error',
    description: 'No endpoint has this path. Check the path against docs/api.md.',
  },
  method_not_allowed: {
    status: 405,
    type: 'invalid_request_error',
    description: 'The path exists but not with this HTTP method; the Allow header lists the methods it takes.',
  },
  invalid_json: {
    status: 400,
    type: 'invalid_request_error',
    description: 'The request body is not valid JSON, or not a JSON object where one is required.',
  },
  invalid_content_type: {
    status: 400,
    type: 'invalid_request_error',
    description: 'A request with a body must send it as JSON with Content-Type: application/json.',
  },
  request_too_large: {
    status: 413,
    type: 'invalid_request_error',
    description: 'The request body is larger than the service accepts (1 MiB).',
  },
  parameter_missing: {
    status: 400,
    type: 'invalid_request_error',
    description: 'A required parameter is absent; param names it.',
  },
  parameter_invalid: {
    status: 400,
    type: 'invalid_request_error',
    description: 'A parameter has the wrong type or an unacceptable value; param names it.',
  },
  authentication_required: {
    status: 401,
    type: 'authentication_error',
    description: 'No credential was sent. Send Authorization: Bearer <token> with a pat_ or nsk_ token.',
  },
  invalid_credentials: {
    status: 401,
    type: 'authentication_error',
    description: 'The credential sent is malformed or does not exist.',
  },
  credentials_expired: {
    status: 401,
    type: 'authentication_error',
    description: 'The credential has passed its expiry time. Create a new one.',
  },
  credentials_revoked: {
    status: 401,
    type: 'authentication_error',
    description: 'The credential was revoked. Create a new one.',
  },
  organization_deactivated: {
    status: 401,
    type: 'authentication_error',
    description:
      'The credential belongs to an organization the service operator deactivated; its data is kept. Ask the operator.',
  },
  user_deactivated: {
    status: 401,
    type: 'authentication_error',
    description: 'The token belongs to a person an owner deactivated. Ask an owner of the organization.',
  },
  operator_required: {
    status: 403,
    type: 'permission_error',
    description:
      'Only the service operator (an opr_ token from lake init) may do this: create, rename or deactivate organizations.',
  },
  missing_scope: {
    status: 403,
    type: 'permission_error',
    description: 'The credential is valid but lacks the scope this endpoint needs; the message names it.',
  },
  user_required: {
    status: 403,
    type: 'permission_error',
    description: 'Only a person (a personal access token) can do this; organization-owned keys cannot.',
  },
  owner_required: {
    status: 403,
    type: 'permission_error',
    description: 'Only an owner of the organization (through a personal access token) may do this.',
  },
  creator_required: {
    status: 403,
    type: 'permission_error',
    description: 'Only the creator of this send or canvas, or an owner of the organization, may change it.',
  },
  organization_not_found: {
    status: 404,
    type: 'invalid_request_error',
    description: 'No organization has this id.',
  },
  user_not_found: {
    status: 404,
    type: 'invalid_request_error',
    description: 'No person with this id exists in your organization.',
  },
  grant_not_found: {
    status: 404,
    type: 'invalid_request_error',
    description: 'No grant with this id exists in your organization.',
  },
  last_owner: {
    status: 409,
    type: 'invalid_request_error',
    description: 'An organization keeps at least one active owner: make someone else an owner first.',
  },
  key_not_found: {
    status: 404,
    type: 'invalid_request_error',
    description: 'No service key or team API key with this id exists in your organization.',
  },
  canvas_not_found: {
    status: 404,
    type: 'invalid_request_error',
    description: 'No canvas with this id exists in your organization.',
  },
  canvas_full: {
    status: 409,
    type: 'invalid_request_error',
    description:
      'The canvas holds the most a canvas may (100 table elements, 100,000 characters of SQL in all); make another canvas for more.',
  },
  element_not_found: {
    status: 404,
    type: 'invalid_request_error',
    description: 'The canvas has no table element with this id.',
  },
  element_query_failed: {
    status: 422,
    type: 'invalid_request_error',
    description: "The element's saved query failed when it ran; the message says why. Fix the element's SQL.",
  },
  pat_not_found: {
    status: 404,
    type: 'invalid_request_error',
    description: 'No personal access token with this id belongs to you.',
  },
  write_not_allowed: {
    status: 400,
    type: 'invalid_request_error',
    description: 'The SQL contains a write, DDL or session keyword. Only read-only SELECT statements run.',
  },
  multiple_statements: {
    status: 400,
    type: 'invalid_request_error',
    description: 'The SQL holds more than one statement. Send one statement per query.',
  },
  forbidden_function: {
    status: 400,
    type: 'invalid_request_error',
    description: 'The SQL names a file or storage function, or a storage URI. Query lake tables by name instead.',
  },
  sql_too_long: {
    status: 400,
    type: 'invalid_request_error',
    description: 'The SQL is longer than 100,000 characters.',
  },
  invalid_format: { status: 400, type: 'invalid_request_error', description: 'format must be files or inline.' },
  invalid_cursor: {
    status: 400,
    type: 'invalid_request_error',
    description: 'starting_after is not a cursor returned by a previous page of this resource.',
  },
  signed_url_invalid: {
    status: 403,
    type: 'permission_error',
    description: 'The download URL was altered or is not a lake URL. Poll the query for a fresh one.',
  },
  signed_url_expired: {
    status: 403,
    type: 'permission_error',
    description:
      'The download URL is more than an hour old. Poll the query (or GET /jobs/{id}/result) for a freshly signed one.',
  },
  range_not_satisfiable: {
    status: 416,
    type: 'invalid_request_error',
    description: 'The Range header asks for bytes outside the file; Content-Range gives its size.',
  },
  query_not_found: {
    status: 404,
    type: 'invalid_request_error',
    description: 'No query with this id exists in your organization.',
  },
  too_many_queries: {
    status: 429,
    type: 'rate_limit_error',
    description:
      'Your organization has too many queries in flight. Wait for some to finish; Retry-After says when to try again.',
  },
  too_many_streams: {
    status: 429,
    type: 'rate_limit_error',
    description:
      'This credential (20) or your organization (100) has as many event streams open on this server as it may. Close one, or poll instead; Retry-After says when to try again.',
  },
  result_storage_full: {
    status: 409,
    type: 'invalid_request_error',
    description:
      "Your organization's kept query results have reached its result storage limit. Older results are removed when their retention ends; try again then.",
  },
  object_limit_reached: {
    status: 409,
    type: 'invalid_request_error',
    description:
      'Your organization (for personal access tokens: you) already keeps the most objects of this kind the server allows: sources, sends, canvases, active people, active keys, grants or active tokens. Delete, deactivate or revoke one no longer needed, or ask the operator to raise the limit (docs/api.md, "Object limits").',
  },
  inline_row_too_large: {
    status: 422,
    type: 'invalid_request_error',
    description:
      'A row of this result is too large for a JSON page. Download the result as Parquet with format=files (or GET /jobs/{id}/result).',
  },
  idempotency_key_reused: {
    status: 409,
    type: 'invalid_request_error',
    description: 'This Idempotency-Key was already used with a different request. Use a new key for new work.',
  },
  grant_table_denied: {
    status: 403,
    type: 'permission_error',
    description: 'The query names a table this credential may not read; the message names it.',
  },
  service_key_permissions_off: {
    status: 403,
    type: 'permission_error',
    description: 'Service keys can query only in organizations that have turned table permissions on.',
  },
  grant_introspection_denied: {
    status: 403,
    type: 'permission_error',
    description:
      'A credential restricted by table permissions may not list tables through SQL. Use the catalog endpoints.',
  },
  catalog_not_found: {
    status: 404,
    type: 'invalid_request_error',
    description: 'The schema or table does not exist, or this credential may not see it.',
  },
  invalid_source_parameters: {
    status: 400,
    type: 'invalid_request_error',
    description: 'A field of the source body is invalid; param names it.',
  },
  source_not_found: {
    status: 404,
    type: 'invalid_request_error',
    description: 'No source with this id is accessible; deleted sources are not found either.',
  },
  malformed_request: {
    status: 400,
    type: 'invalid_request_error',
    description: 'The request could not be parsed as HTTP/1.1, or its Host header names no host.',
  },
  headers_too_large: {
    status: 431,
    type: 'invalid_request_error',
    description: 'The request headers are larger than the server accepts (16 KB).',
  },
  host_not_allowed: {
    status: 403,
    type: 'permission_error',
    description:
      "The server's outbound rules refuse this host (the server's own machine, link-local, cloud metadata and Unix socket targets by default; lake's own database always); ask its operator.",
  },
  source_name_conflict: {
    status: 409,
    type: 'invalid_request_error',
    description:
      'Another source has this name, or the lake schema it leads to is reserved, held by another source (deleted ones too) or already in the lake.',
  },
  source_config_unavailable: {
    status: 409,
    type: 'invalid_request_error',
    description: 'The source cannot be changed right now, for example while a sync runs.',
  },
  source_pause_failed: { status: 409, type: 'invalid_request_error', description: 'The pause could not be applied.' },
  source_paused: {
    status: 409,
    type: 'invalid_request_error',
    description: 'The source is paused; resume it (PATCH paused: false) before syncing.',
  },
  sync_in_progress: {
    status: 409,
    type: 'invalid_request_error',
    description: 'The source already has a sync queued or running; the message names it. No second run was started.',
  },
  job_not_found: {
    status: 404,
    type: 'invalid_request_error',
    description: 'No job with this id exists in your organization.',
  },
  job_not_cancellable: {
    status: 409,
    type: 'invalid_request_error',
    description: 'The job already succeeded or failed; only queued or running work can be cancelled.',
  },
  job_not_finished: {
    status: 409,
    type: 'invalid_request_error',
    description: 'The job has no result yet; wait for it to succeed (GET /jobs/{id} or its events).',
  },
  job_has_no_result: {
    status: 409,
    type: 'invalid_request_error',
    description:
      'Only a succeeded query job has a result to download; this job failed, was cancelled, or is not a query.',
  },
  invalid_last_event_id: {
    status: 400,
    type: 'invalid_request_error',
    description: 'Last-Event-ID is not an event id of this stream.',
  },
  send_not_found: {
    status: 404,
    type: 'invalid_request_error',
    description: 'No send with this id exists in your organization.',
  },
  send_run_not_found: { status: 404, type: 'invalid_request_error', description: 'The send has no run with this id.' },
  send_paused: {
    status: 409,
    type: 'invalid_request_error',
    description: 'The send is paused; resume it (PATCH paused: false) before running it.',
  },
  send_in_progress: {
    status: 409,
    type: 'invalid_request_error',
    description:
      'The send already has a run in progress; no second run was started. Wait for it, or cancel it through its job.',
  },
  rate_limited: {
    status: 429,
    type: 'rate_limit_error',
    description: 'Too many requests. Wait the number of seconds in Retry-After, then retry.',
  },
  error_code_not_found: {
    status: 404,
    type: 'invalid_request_error',
    description: 'There is no error code with this name.',
  },
  service_unavailable: {
    status: 503,
    type: 'api_error',
    description:
      "The service cannot reach its metadata store for a moment, this server cannot open stored secrets (its secrets key differs from the other replicas'), or it holds as many connections as it takes; nothing was changed. Retry after Retry-After seconds.",
  },
  internal_error: {
    status: 500,
    type: 'api_error',
    description: 'The service failed unexpectedly. Retry later and quote the request id if it persists.',
  },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CATALOGUE, value);
}
