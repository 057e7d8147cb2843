/** The API's routes: The service itself: health, version, errors, usage, the document. */
import { WhoAmI } from './credentials.js';
import { ResultFileFormat } from './queries.js';
import { defineRoute } from './route.js';
import { List, OneOf, pageQuery, Type } from './schema.js';
import { AUDIT_ACTIONS, AuditEvent, ErrorCodeInfo, Health, Readiness, Usage, Version } from './service.js';
import { cursorErrors, id, json } from './route-helpers.js';

export const SERVICE_ROUTES = {
  getVersion: defineRoute({
    operationId: 'getVersion',
    method: 'get',
    path: '/version',
    tag: 'Service',
    summary: 'API and server version',
    auth: { public: true, probe: true },
    responses: { 200: json('The versions.', Version) },
  }),
  getHealth: defineRoute({
    operationId: 'getHealth',
    method: 'get',
    path: '/healthz',
    tag: 'Service',
    summary: 'Liveness: the process answers (for a load balancer or orchestrator)',
    auth: { public: true, probe: true },
    responses: { 200: json('The process is alive.', Health) },
  }),
  getReadiness: defineRoute({
    operationId: 'getReadiness',
    method: 'get',
    path: '/readyz',
    tag: 'Service',
    summary: 'Readiness: the metadata store answers and the server is not shutting down',
    auth: { public: true, probe: true },
    responses: { 200: json('Ready for work.', Readiness) },
    errors: ['service_unavailable'],
  }),
  listAuditEvents: defineRoute({
    operationId: 'listAuditEvents',
    method: 'get',
    path: '/audit_events',
    tag: 'Service',
    summary: "The organization's audit log, newest first (owners; the operator reads every organization's)",
    auth: { operator: 'also' },
    paramErrors: cursorErrors,
    query: Type.Object({
      ...pageQuery(50, 200),
      action: Type.Optional(OneOf(AUDIT_ACTIONS, { description: 'Only this action.' })),
      organization: Type.Optional(
        Type.String({ maxLength: 64, description: 'The operator: only this organization’s events.' }),
      ),
      actor: Type.Optional(Type.String({ maxLength: 64, description: 'Only what this credential or user did.' })),
      since: Type.Optional(
        Type.Integer({ minimum: 0, maximum: 999_999_999_999, description: 'At or after this time, epoch seconds.' }),
      ),
      until: Type.Optional(
        Type.Integer({ minimum: 0, maximum: 999_999_999_999, description: 'Before this time, epoch seconds.' }),
      ),
    }),
    responses: { 200: json('A page of audit events.', List(AuditEvent)) },
    errors: ['owner_required', 'invalid_cursor'],
  }),
  whoAmI: defineRoute({
    operationId: 'whoAmI',
    method: 'get',
    path: '/whoami',
    tag: 'Service',
    summary: 'The calling credential, its organization and scopes',
    auth: { teamKey: 'also' },
    responses: { 200: json('Who is calling.', WhoAmI) },
  }),
  getErrorCode: defineRoute({
    operationId: 'getErrorCode',
    method: 'get',
    path: '/errors/{code}',
    tag: 'Service',
    summary: 'Explain an error code',
    auth: { public: true },
    params: Type.Object({ code: Type.String({ minLength: 1 }) }),
    responses: { 200: json('The code, its status and what to do.', ErrorCodeInfo) },
    errors: ['error_code_not_found'],
  }),
  getUsage: defineRoute({
    operationId: 'getUsage',
    method: 'get',
    path: '/usage',
    tag: 'Service',
    summary: "The organization's usage and cost for a month",
    auth: { scopes: ['usage:read'] },
    query: Type.Object({
      month: Type.Optional(
        Type.String({
          pattern: '^\\d{4}-(0[1-9]|1[0-2])$',
          examples: ['2026-11'],
          description: 'YYYY-MM; the current month when absent.',
        }),
      ),
    }),
    responses: { 200: json('Usage by day, totals and cost.', Usage) },
  }),
  downloadResultFile: defineRoute({
    operationId: 'downloadResultFile',
    method: 'get',
    path: '/files/results/{id}',
    tag: 'Queries',
    summary: 'Download a result file by signed URL (GET or HEAD; Range supported)',
    auth: { public: true },
    params: id('A query id.'),
    requestHeaders: ['Range'],
    query: Type.Object({
      expires: Type.Optional(Type.String()),
      signature: Type.Optional(Type.String()),
      file_format: Type.Optional(ResultFileFormat),
    }),
    responses: {
      200: {
        description: 'The Parquet file (or, with file_format=csv, the CSV: text/csv).',
        contentType: 'application/vnd.apache.parquet',
        headers: ['Accept-Ranges', 'ETag'],
      },
      206: {
        description: 'The requested byte range (of the file file_format names).',
        contentType: 'application/vnd.apache.parquet',
        headers: ['Accept-Ranges', 'ETag', 'Content-Range'],
      },
    },
    errors: [
      'signed_url_invalid',
      'signed_url_expired',
      'organization_deactivated',
      'range_not_satisfiable',
      'result_storage_full',
      'service_unavailable',
    ],
  }),
  getOpenApiDocument: defineRoute({
    operationId: 'getOpenApiDocument',
    method: 'get',
    path: '/openapi.json',
    tag: 'Service',
    summary: 'This document (OpenAPI 3.1)',
    auth: { public: true },
    responses: {
      200: {
        description: 'The OpenAPI document.',
        schema: Type.Object({ openapi: Type.String() }, { additionalProperties: true }),
      },
    },
  }),
  getApiReference: defineRoute({
    operationId: 'getApiReference',
    method: 'get',
    path: '/reference',
    tag: 'Service',
    summary: 'A readable reference page of this document (no external assets)',
    auth: { public: true },
    responses: { 200: { description: 'An HTML page.', contentType: 'text/html' } },
  }),
};
