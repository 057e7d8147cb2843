/**
 * The OpenAPI 3.1 document, built from the route table: served at GET /openapi.json, rendered at GET /reference,
 * and checked by the tests with a standard validator and a client generator.
 */
import * as canvases from './canvases.js';
import * as catalog from './catalog.js';
import * as credentials from './credentials.js';
import { ERROR_CATALOGUE, type ErrorCode } from './errors.js';
import { JOB_EVENTS } from './events.js';
import * as jobs from './jobs.js';
import * as queries from './queries.js';
import type { ResponseHeader, RouteContract } from './route.js';
import { ROUTES } from './routes.js';
import * as sends from './sends.js';
import * as service from './service.js';
import * as sources from './sources.js';
import type { TSchema } from './schema.js';

type Json = Record<string, unknown>;

/** Schemas shown once under components and referred to everywhere else: every exported wire object. */
const NAMED: ReadonlyMap<object, string> = new Map(
  Object.entries({ ...queries, ...jobs, ...sources, ...sends, ...canvases, ...catalog, ...credentials, ...service })
    .filter(
      ([, value]) =>
        (typeof value === 'object' && value !== null && 'type' in value) ||
        (typeof value === 'object' && value !== null && 'anyOf' in value),
    )
    .map(([name, value]) => [value as object, name]),
);

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

/** A schema as JSON, with named schemas inside it replaced by references (`top` keeps the outermost one inline). */
function emit(schema: unknown, top = true): unknown {
  if (Array.isArray(schema)) return schema.map((item) => emit(item, false));
  if (schema === null || typeof schema !== 'object') return schema;
  const name = NAMED.get(schema);
  if (name !== undefined && !top) return ref(name);
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, emit(value, false)]));
}

const COMMON_HEADERS: Json = {
  'Request-Id': { description: 'This request’s id (req_…), also in every error body.', schema: { type: 'string' } },
  'Service-Version': { description: 'The API version.', schema: { type: 'string' } },
  'X-RateLimit-Limit': {
    description: 'Requests per minute allowed to this caller (authenticated requests).',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': { description: 'Requests this caller has left this minute.', schema: { type: 'integer' } },
  'X-RateLimit-Org-Limit': {
    description: 'Requests per minute allowed to the organization.',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Org-Remaining': {
    description: 'Requests the organization has left this minute.',
    schema: { type: 'integer' },
  },
};

const ROUTE_HEADERS: Record<ResponseHeader | 'Retry-After' | 'Allow', Json> = {
  Location: { description: 'The path of the resource created or started.', schema: { type: 'string' } },
  'Idempotent-Replayed': {
    description: '`true` when this answer replays an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
  'Content-Range': { description: 'The bytes sent and the file size.', schema: { type: 'string' } },
  'Accept-Ranges': { description: 'Always `bytes`.', schema: { type: 'string' } },
  ETag: { description: 'Identifies the file’s content.', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } },
  Allow: { description: 'The methods the path takes.', schema: { type: 'string' } },
};

const headerRefs = (names: readonly string[]): Json =>
  Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));

const REQUEST_HEADERS: Record<string, Json> = {
  'Idempotency-Key': {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: 'Makes retries safe: the same key and body within 24 hours replay the first answer.',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
  },
  'Last-Event-ID': {
    name: 'Last-Event-ID',
    in: 'header',
    required: false,
    description: 'Resume after this event id.',
    schema: { type: 'string' },
  },
  Range: {
    name: 'Range',
    in: 'header',
    required: false,
    description: 'One byte range: bytes=a-b, bytes=a- or bytes=-n.',
    schema: { type: 'string' },
  },
};

/** The error statuses a route can answer, each with the codes that lead to it. */
function errorStatuses(route: RouteContract): Map<number, ErrorCode[]> {
  const codes: ErrorCode[] = ['rate_limited', 'internal_error', 'service_unavailable', ...(route.errors ?? [])];
  if (!route.auth.public)
    codes.push(
      'authentication_required',
      'invalid_credentials',
      'credentials_expired',
      'credentials_revoked',
      'missing_scope',
      'organization_deactivated',
      'user_deactivated',
    );
  if (route.query || route.params) codes.push('parameter_invalid');
  if (route.body)
    codes.push('parameter_missing', 'parameter_invalid', 'invalid_json', 'invalid_content_type', 'request_too_large');
  if (route.invalidBodyCode) codes.push(route.invalidBodyCode);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return byStatus;
}

function parameters(route: RouteContract): Json[] {
  const list: Json[] = [];
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) continue;
    const required = new Set((schema as unknown as { required?: string[] }).required ?? []);
    for (const [name, property] of Object.entries(
      (schema as unknown as { properties: Record<string, TSchema> }).properties,
    )) {
      const { description, ...rest } = emit(property) as Json;
      list.push({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  }
  for (const header of route.requestHeaders ?? []) list.push(REQUEST_HEADERS[header] as Json);
  return list;
}

function security(route: RouteContract): Json[] {
  if (route.auth.public) return [];
  if (route.auth.teamKey === 'only') return [{ teamApiKey: [] }];
  if (route.auth.operator === 'only') return [{ operatorToken: [] }];
  const bearer = { bearerAuth: [...(route.auth.scopes ?? [])] };
  return [
    bearer,
    ...(route.auth.teamKey === 'also' ? [{ teamApiKey: [] }] : []),
    ...(route.auth.streamToken ? [{ streamToken: [] }] : []),
    ...(route.auth.operator === 'also' ? [{ operatorToken: [] }] : []),
  ];
}

function operation(route: RouteContract): Json {
  const responses: Json = {};
  for (const [status, response] of Object.entries(route.responses)) {
    const type = response.contentType ?? 'application/json';
    const schema = response.schema
      ? emit(response.schema, false)
      : type === 'text/event-stream'
        ? { type: 'string', description: 'Events named as in x-lake-events.' }
        : type === 'text/html'
          ? { type: 'string' }
          : { type: 'string', format: 'binary' };
    responses[status] = {
      description: response.description,
      headers: headerRefs([...Object.keys(COMMON_HEADERS), ...(response.headers ?? [])]),
      ...(Number(status) === 204 ? {} : { content: { [type]: { schema } } }),
    };
  }
  for (const [status, codes] of [...errorStatuses(route)].sort(([a], [b]) => a - b)) {
    responses[status] = {
      description: `Error: ${codes.join(', ')}.`,
      headers: headerRefs([
        ...Object.keys(COMMON_HEADERS),
        ...(status === 429 || status === 503 ? ['Retry-After'] : []),
        ...(status === 405 ? ['Allow'] : []),
      ]),
      content: { 'application/json': { schema: ref('ErrorEnvelope') } },
    };
  }
  const streams = Object.values(route.responses).some((r) => r.contentType === 'text/event-stream');
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    security: security(route),
    ...(parameters(route).length ? { parameters: parameters(route) } : {}),
    ...(route.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: emit(route.body, false) } } } }
      : {}),
    responses,
    ...(streams
      ? {
          'x-lake-events': Object.fromEntries(
            Object.keys(JOB_EVENTS).map((name) => [name, ref(eventSchemaName(name))]),
          ),
        }
      : {}),
  };
}

const eventSchemaName = (event: string): string => `Event_${event}`;

export interface DocumentOptions {
  apiVersion: string;
  serverVersion: string;
  /** The origin clients call; absent, the document names no server. */
  serverUrl?: string;
}

export function openApiDocument(options: DocumentOptions): Json {
  const paths: Record<string, Json> = {};
  for (const route of ROUTES) paths[route.path] = { ...paths[route.path], [route.method]: operation(route) };
  const schemas: Json = Object.fromEntries([...NAMED].map(([schema, name]) => [name, emit(schema)]));
  for (const [name, schema] of Object.entries(JOB_EVENTS)) schemas[eventSchemaName(name)] = emit(schema);
  return {
    openapi: '3.1.0',
    info: {
      title: 'lake API',
      version: options.apiVersion,
      description: `Query, catalogue and sync a data lake. Served by lake ${options.serverVersion}. Errors share one envelope (ErrorEnvelope); GET /errors/{code} explains each code. Event streams are Server-Sent Events whose names and data are listed in x-lake-events.`,
    },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    tags: [...new Set(ROUTES.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas,
      headers: { ...COMMON_HEADERS, ...ROUTE_HEADERS },
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'A personal access token (pat_…) or service key (nsk_…).',
        },
        teamApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description: 'A team API key (tak_…), for the legacy table download and whoami.',
        },
        operatorToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'The service operator’s token (opr_…, from lake init): organizations only.',
        },
        streamToken: {
          type: 'apiKey',
          in: 'query',
          name: 'stream_token',
          description: 'From POST …/stream_url: opens that one stream for 5 minutes.',
        },
      },
    },
  };
}
