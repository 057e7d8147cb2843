import type { ErrorCode } from './errors.js';
import type { Static, TObject, TSchema } from './schema.js';

export type Method = 'get' | 'post' | 'patch' | 'delete';

/**
 * Who may call a route: a bearer credential with any of `scopes`; `public` (no credential); a team API key in
 * x-api-key (`teamKey`: `only` for the legacy download, `also` beside bearer credentials); `streamToken` lets a
 * stream URL (POST …/stream_url) stand in for the Authorization header.
 */
export interface RouteAuth {
  scopes?: readonly string[];
  public?: boolean;
  /** A public probe (version, health, readiness): never rate-limited, so other clients' traffic cannot fail it. */
  probe?: boolean;
  teamKey?: 'only' | 'also';
  streamToken?: boolean;
  /** The service operator's token (opr_…): `only` for organization management, `also` beside bearer credentials. */
  operator?: 'only' | 'also';
}

export interface ResponseContract {
  description: string;
  schema?: TSchema;
  /** Defaults to application/json. */
  contentType?: 'application/json' | 'text/event-stream' | 'application/vnd.apache.parquet' | 'text/html';
  /** Response headers beyond those every response carries (Request-Id, Service-Version, rate limits). */
  headers?: readonly ResponseHeader[];
}

export type ResponseHeader = 'Location' | 'Idempotent-Replayed' | 'Content-Range' | 'Accept-Ranges' | 'ETag';

export interface RouteContract {
  operationId: string;
  method: Method;
  /** OpenAPI form: `/queries/{id}`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth: RouteAuth;
  /** Type.Object schemas: path parameters (strings) and query parameters (converted from strings by type). */
  params?: TObject;
  query?: TObject;
  body?: TSchema;
  /** Request headers the route reads. */
  requestHeaders?: readonly ('Idempotency-Key' | 'Last-Event-ID' | 'Range')[];
  /** Parameters whose refusal has its own code (the spec's invalid_format for `format`, invalid_cursor). */
  paramErrors?: Readonly<Record<string, ErrorCode>>;
  /** The code a malformed body field gets; the spec gives sources their own. */
  invalidBodyCode?: Extract<ErrorCode, 'parameter_invalid' | 'invalid_source_parameters'>;
  responses: Readonly<Record<number, ResponseContract>>;
  /** Error codes particular to this route; the common ones (authentication, rate limits, validation) apply to all. */
  errors?: readonly ErrorCode[];
}

/** Keeps a route's literal types (its schemas) so handlers get typed inputs. */
export const defineRoute = <const R extends RouteContract>(route: R): R => route;

/** What a handler receives once the request passed validation. */
export interface RouteInput<R extends RouteContract> {
  params: R['params'] extends TObject ? Static<R['params']> : Record<string, never>;
  query: R['query'] extends TObject ? Static<R['query']> : Record<string, never>;
  body: R['body'] extends TSchema ? Static<R['body']> : undefined;
}
