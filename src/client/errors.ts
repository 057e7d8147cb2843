/** The one error type of the client layer: an error envelope from the API, or no answer at all. */
export class LakeApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | undefined;
  readonly docUrl: string | undefined;
  readonly requestId: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(fields: {
    status: number;
    type: string;
    code: string;
    message: string;
    param?: string;
    docUrl?: string;
    requestId?: string;
    retryAfterSeconds?: number;
  }) {
    super(fields.message);
    this.name = 'LakeApiError';
    this.status = fields.status;
    this.type = fields.type;
    this.code = fields.code;
    this.param = fields.param;
    this.docUrl = fields.docUrl;
    this.requestId = fields.requestId;
    this.retryAfterSeconds = fields.retryAfterSeconds;
  }

  /** Builds the error from a non-2xx response, tolerating bodies that are not our envelope (a proxy's 502 page). */
  static fromResponse(response: Response, body: unknown): LakeApiError {
    const envelope = (body as { error?: Record<string, unknown> } | undefined)?.error;
    const text = (key: string): string | undefined => {
      const value = envelope?.[key];
      return typeof value === 'string' ? value : undefined;
    };
    return new LakeApiError({
      status: response.status,
      type: text('type') ?? 'api_error',
      code: text('code') ?? `http_${response.status}`,
      message: text('message') ?? `The server answered HTTP ${response.status} ${response.statusText}`.trim(),
      param: text('param'),
      docUrl: text('doc_url'),
      requestId: text('request_id') ?? response.headers.get('Request-Id') ?? undefined,
      retryAfterSeconds: parseRetryAfter(response.headers.get('Retry-After')),
    });
  }
}

/**
 * A value given for a request that the request cannot carry, said before anything is sent: a token or key no HTTP
 * header can hold (a line break, a NUL or a character past U+00FF; named, never shown, as it may be a secret), or an
 * empty id or name in a path (`/jobs/` is no job, and a router that ignores the slash would answer the list).
 */
export class LakeRequestError extends Error {
  readonly code: 'invalid_header_value' | 'empty_parameter';
  constructor(message: string, code: LakeRequestError['code'] = 'invalid_header_value') {
    super(message);
    this.name = 'LakeRequestError';
    this.code = code;
  }
}

/** The server could not be reached at all (refused, reset, DNS, TLS). */
export class LakeConnectionError extends Error {
  readonly code = 'connection_failed';
  constructor(message: string) {
    super(message);
    this.name = 'LakeConnectionError';
  }
}

export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}
