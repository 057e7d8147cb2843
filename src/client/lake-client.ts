import type { RouteContract } from '../contract/route.js';
import type { Static, TObject, TSchema } from '../contract/schema.js';
import { LakeApiError, LakeConnectionError, LakeRequestError, parseRetryAfter } from './errors.js';
import { DEFAULT_RETRY_POLICY, RETRYABLE_STATUSES, retryDelayMs, type RetryPolicy } from './retry.js';

export type FetchFunction = (request: Request) => Promise<Response>;

export interface RetryNotice {
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface LakeClientOptions {
  fetch: FetchFunction;
  baseUrl: string;
  token?: string | undefined;
  userAgent?: string;
  retry?: RetryPolicy;
  sleep?: (ms: number) => Promise<void>;
  /** Told before each wait, so a CLI can say on stderr why it is pausing. */
  onRetry?: (notice: RetryNotice) => void;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  idempotencyKey?: string;
}

export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  body: T;
}

type SuccessSchema<R extends RouteContract> = R['responses'] extends { 200: { schema: infer S } }
  ? S
  : R['responses'] extends { 201: { schema: infer S } }
    ? S
    : R['responses'] extends { 202: { schema: infer S } }
      ? S
      : undefined;

/** The body a route answers with when it succeeds, as the contract types it. */
export type ResponseOf<R extends RouteContract> =
  SuccessSchema<R> extends TSchema ? Static<SuccessSchema<R>> : undefined;

/** What a call of a route takes: its path parameters, query and body as the contract types them. */
export type CallInput<R extends RouteContract> = (R['params'] extends TObject
  ? { params: Static<R['params']> }
  : { params?: undefined }) &
  (R['query'] extends TObject ? { query?: Static<R['query']> } : { query?: undefined }) &
  (R['body'] extends TSchema ? { body: Static<R['body']> } : { body?: undefined }) & {
    idempotencyKey?: string;
    headers?: Record<string, string>;
  };

/** A route's path with its parameters filled in (each encoded as one path segment). */
export function routePath(route: Pick<RouteContract, 'path'>, params: Readonly<Record<string, string>>): string {
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name] ?? '';
    if (value === '')
      throw new LakeRequestError(
        `The ${name} is empty, so it names nothing (${route.path}); nothing was sent.`,
        'empty_parameter',
      );
    return encodeURIComponent(value);
  });
}

/** The items of a list route's answer. */
export type ItemOf<R extends RouteContract> = ResponseOf<R> extends { data: (infer T)[] } ? T : never;

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Typed access to the lake API over any fetch function: undici for a remote service, the app's own handler for
 * the local lake. Retries only what is safe to repeat (GET, HEAD, or a request carrying an Idempotency-Key).
 */
export class LakeClient {
  private readonly options: LakeClientOptions;
  private readonly retry: RetryPolicy;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: LakeClientOptions) {
    this.options = options;
    this.retry = options.retry ?? DEFAULT_RETRY_POLICY;
    this.sleep = options.sleep ?? defaultSleep;
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  /** The transport under `call`: one request, retried when that is safe. Commands use `call` and `read`. */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const retryable = method === 'GET' || method === 'HEAD' || options.idempotencyKey !== undefined;
    for (let attempt = 1; ; attempt++) {
      const canRetry = retryable && attempt < this.retry.maxAttempts;
      let response: Response;
      try {
        response = await this.options.fetch(this.buildRequest(method, path, options));
      } catch (error) {
        // A value no header can carry is the caller's to fix, not the network's to retry.
        if (error instanceof LakeRequestError) throw error;
        if (!canRetry) throw new LakeConnectionError(describeConnectionFailure(this.options.baseUrl, error));
        await this.wait(attempt, undefined, 'the service could not be reached');
        continue;
      }
      const body = await readBody(response);
      if (response.ok) return { status: response.status, headers: response.headers, body: body as T };
      const retryAfter = parseRetryAfter(response.headers.get('Retry-After'));
      const waitable = retryAfter === undefined || retryAfter * 1000 <= this.retry.maxRetryAfterMs;
      if (canRetry && RETRYABLE_STATUSES.has(response.status) && waitable) {
        await this.wait(
          attempt,
          retryAfter,
          response.status === 429 ? 'rate limited by the service (HTTP 429)' : `HTTP ${response.status}`,
        );
        continue;
      }
      throw LakeApiError.fromResponse(response, body);
    }
  }

  /** Calls a route of the contract: its method and path, typed input, typed answer. */
  async call<const R extends RouteContract>(route: R, input: CallInput<R>): Promise<ApiResponse<ResponseOf<R>>> {
    const path = routePath(route, (input.params ?? {}) as Record<string, string>);
    const query = input.query as RequestOptions['query'];
    return this.request<ResponseOf<R>>(route.method.toUpperCase(), path, {
      query,
      body: input.body,
      idempotencyKey: input.idempotencyKey,
      headers: input.headers,
    });
  }

  /** The body of a successful call. */
  async read<const R extends RouteContract>(route: R, input: CallInput<R>): Promise<ResponseOf<R>> {
    return (await this.call(route, input)).body;
  }

  /** A plain request to an absolute URL (a signed download link) through the same transport, without the token. */
  fetchUrl(url: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.options.fetch(
      new Request(url, { headers: { 'User-Agent': this.options.userAgent ?? 'lake-cli', ...headers } }),
    );
  }

  /** The fetch an EventSource uses: this client's transport, with its credential. */
  readonly streamFetch = (
    url: string | URL,
    init?: { headers?: Record<string, string>; signal?: AbortSignal; method?: string },
  ): Promise<Response> => {
    const headers = new Headers(init?.headers);
    headers.set('User-Agent', this.options.userAgent ?? 'lake-cli');
    if (this.options.token) setHeader(headers, 'Authorization', `Bearer ${this.options.token}`, 'The token');
    return this.options.fetch(new Request(url, { method: init?.method ?? 'GET', headers, signal: init?.signal }));
  };

  /** An absolute URL for a path of this service. */
  url(path: string): string {
    return new URL(path.replace(/^\//, ''), this.options.baseUrl.replace(/\/?$/, '/')).toString();
  }

  private buildRequest(method: string, path: string, options: RequestOptions): Request {
    const url = new URL(path.replace(/^\//, ''), this.options.baseUrl.replace(/\/?$/, '/'));
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers = new Headers(options.headers);
    headers.set('Accept', 'application/json');
    headers.set('User-Agent', this.options.userAgent ?? 'lake-cli');
    if (this.options.token) setHeader(headers, 'Authorization', `Bearer ${this.options.token}`, 'The token');
    if (options.idempotencyKey) setHeader(headers, 'Idempotency-Key', options.idempotencyKey, 'The idempotency key');
    let body: string | undefined;
    if (options.body !== undefined) {
      headers.set('Content-Type', 'application/json');
      body = JSON.stringify(options.body);
    }
    return new Request(url, { method, headers, body });
  }

  private async wait(attempt: number, retryAfterSeconds: number | undefined, reason: string): Promise<void> {
    const delayMs = retryDelayMs(this.retry, attempt, retryAfterSeconds);
    this.options.onRetry?.({ attempt, delayMs, reason });
    await this.sleep(delayMs);
  }
}

/** Sets a header from a value someone gave, refusing one no header can carry with what to fix (never the value). */
function setHeader(headers: Headers, name: string, value: string, what: string): void {
  try {
    headers.set(name, value);
  } catch {
    throw new LakeRequestError(
      `${what} holds a character an HTTP header cannot carry (a line break, a NUL, or one past U+00FF); nothing was sent.`,
    );
  }
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON (a proxy's HTML page): the caller reports the status without a body to read.
    return undefined;
  }
}

/** Names the base URL the user configured and the kind of failure, never credentials or resolved addresses. */
function describeConnectionFailure(baseUrl: string, error: unknown): string {
  const cause = (error as { cause?: { code?: string } } | undefined)?.cause?.code;
  const origin = safeOrigin(baseUrl);
  return `Could not reach the lake service at ${origin}${cause ? ` (${cause})` : ''}. Check --base-url and that the server is running.`;
}

function safeOrigin(baseUrl: string): string {
  try {
    return new URL(baseUrl).origin;
  } catch {
    // Only for a message: a malformed base URL is refused where it is read.
    return 'the configured base URL';
  }
}
