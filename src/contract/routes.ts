/**
 * Every route of the API: method, path, who may call it, what it takes and what it answers. The API mounts its
 * handlers from these entries (so a route cannot exist without one), validates requests against them, and serves
 * them as the OpenAPI document; the contract tests check every response against them.
 */
import { Canvas, CanvasCreation, CanvasElement, ElementInput, TableData, TableDataRequest } from './canvases.js';
import { SchemaSummary, Table, TableSummary } from './catalog.js';
import { PersonalAccessToken, ServiceKey, ServiceKeyCreation, TeamApiKey, TeamKeyCreation, TokenCreation, WhoAmI } from './credentials.js';
import { Job, JobCancellation, JobResult, StreamUrl } from './jobs.js';
import { Query, QueryFormat, QuerySubmission } from './queries.js';
import { defineRoute, type ResponseHeader, type RouteContract } from './route.js';
import { List, pageQuery, Type, type TSchema } from './schema.js';
import { Send, SendChange, SendCreation, SendDeletion, SendRun } from './sends.js';
import { ErrorCodeInfo, Health, Readiness, Usage, Version } from './service.js';
import { Connector, LogEntry, Source, SourceChange, SourceCreation, SourceDeletion, SourceTest, Sync, SyncRequestBody } from './sources.js';

const id = (description: string) => Type.Object({ id: Type.String({ minLength: 1, description }) });
const page = (defaultLimit = 20, max = 100) => Type.Object(pageQuery(defaultLimit, max));
/** Every paged route refuses an empty or foreign cursor with invalid_cursor. */
const cursorErrors = { starting_after: 'invalid_cursor' } as const;
const json = <S extends TSchema>(description: string, schema: S, headers?: readonly ResponseHeader[]) => ({ description, schema, ...(headers ? { headers } : {}) });
const events = { description: 'Server-Sent Events (see the event schemas); 204 when there is nothing left to send.', contentType: 'text/event-stream' as const };

export const QUERY_ROUTES = {
  createQuery: defineRoute({
    operationId: 'createQuery', method: 'post', path: '/queries', tag: 'Queries', summary: 'Submit a query',
    description: 'Answers at once (202) with the query running or queued. A replayed Idempotency-Key returns the original query with Idempotent-Replayed: true.',
    auth: { scopes: ['query:read'] }, body: QuerySubmission, requestHeaders: ['Idempotency-Key'],
    responses: { 202: json('The query, running or queued.', Query, ['Location', 'Idempotent-Replayed']) },
    errors: ['write_not_allowed', 'multiple_statements', 'forbidden_function', 'sql_too_long', 'grant_table_denied', 'service_key_permissions_off', 'grant_introspection_denied', 'too_many_queries', 'result_storage_full', 'idempotency_key_reused'],
  }),
  getQuery: defineRoute({
    operationId: 'getQuery', method: 'get', path: '/queries/{id}', tag: 'Queries', summary: 'Get a query and its result',
    auth: { scopes: ['query:read'] }, params: id('A query id (qr_…).'),
    query: Type.Object({
      format: Type.Optional(QueryFormat),
      wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 30, default: 0, description: 'Seconds to hold the request open while the query runs.' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Rows per page with format=inline.' })),
      starting_after: Type.Optional(Type.String({ minLength: 1, description: 'The next_cursor of the previous page.' })),
    }),
    paramErrors: { format: 'invalid_format', starting_after: 'invalid_cursor' },
    responses: { 200: json('The query; result fields once it succeeded.', Query) },
    errors: ['query_not_found', 'invalid_format', 'invalid_cursor', 'inline_row_too_large'],
  }),
};

export const CATALOG_ROUTES = {
  listSchemas: defineRoute({ operationId: 'listSchemas', method: 'get', path: '/catalog', tag: 'Catalog', summary: 'List the lake schemas', auth: { scopes: ['data:read', 'query:read'] }, responses: { 200: json('Schemas the credential may see.', List(SchemaSummary)) } }),
  listTables: defineRoute({
    operationId: 'listTables', method: 'get', path: '/catalog/{schema}', tag: 'Catalog', summary: "List a schema's tables and views",
    auth: { scopes: ['data:read', 'query:read'] }, params: Type.Object({ schema: Type.String({ minLength: 1 }) }),
    responses: { 200: json('Tables and views the credential may see.', List(TableSummary)) }, errors: ['catalog_not_found'],
  }),
  getTable: defineRoute({
    operationId: 'getTable', method: 'get', path: '/catalog/{schema}/{table}', tag: 'Catalog', summary: 'Describe a table or view',
    auth: { scopes: ['data:read', 'query:read'] }, params: Type.Object({ schema: Type.String({ minLength: 1 }), table: Type.String({ minLength: 1 }) }),
    responses: { 200: json('The table and its columns.', Table) }, errors: ['catalog_not_found'],
  }),
};

export const JOB_ROUTES = {
  listJobs: defineRoute({ operationId: 'listJobs', method: 'get', path: '/jobs', tag: 'Jobs', summary: 'List jobs, newest first', auth: { scopes: ['jobs:read'] }, query: page(), paramErrors: cursorErrors, responses: { 200: json('A page of jobs.', List(Job)) }, errors: ['invalid_cursor'] }),
  getJob: defineRoute({ operationId: 'getJob', method: 'get', path: '/jobs/{id}', tag: 'Jobs', summary: 'Get a job', auth: { scopes: ['jobs:read'] }, params: id('A job id (qr_, sync_ or snr_…).'), responses: { 200: json('The job.', Job) }, errors: ['job_not_found'] }),
  getJobResult: defineRoute({
    operationId: 'getJobResult', method: 'get', path: '/jobs/{id}/result', tag: 'Jobs', summary: "Get a query job's result files",
    auth: { scopes: ['jobs:read'] }, params: id('A query job id.'), responses: { 200: json('Signed result URLs.', JobResult) }, errors: ['job_not_found', 'job_not_finished', 'job_has_no_result'],
  }),
  cancelJob: defineRoute({
    operationId: 'cancelJob', method: 'post', path: '/jobs/{id}/cancel', tag: 'Jobs', summary: 'Cancel a queued or running job',
    auth: { scopes: ['jobs:manage'] }, params: id('A job id.'), responses: { 200: json('The job as the cancel left it.', JobCancellation) }, errors: ['job_not_found', 'job_not_cancellable'],
  }),
  streamJobEvents: defineRoute({
    operationId: 'streamJobEvents', method: 'get', path: '/jobs/{id}/events', tag: 'Jobs', summary: "Follow a job's events (SSE)",
    auth: { scopes: ['jobs:read'], streamToken: true }, params: id('A job id.'), requestHeaders: ['Last-Event-ID'],
    responses: { 200: events, 204: { description: 'The job has ended and no event is left after Last-Event-ID.' } }, errors: ['job_not_found', 'invalid_last_event_id'],
  }),
  createJobStreamUrl: defineRoute({
    operationId: 'createJobStreamUrl', method: 'post', path: '/jobs/{id}/stream_url', tag: 'Jobs', summary: "A 5-minute URL for the job's events, for EventSource",
    auth: { scopes: ['jobs:read'] }, params: id('A job id.'), responses: { 200: json('The stream URL.', StreamUrl) }, errors: ['job_not_found'],
  }),
};

export const SOURCE_ROUTES = {
  listConnectors: defineRoute({ operationId: 'listConnectors', method: 'get', path: '/connectors', tag: 'Sources', summary: 'List connectors and their fields', auth: { scopes: ['data:read'] }, responses: { 200: json('Every connector.', List(Connector)) } }),
  getConnector: defineRoute({ operationId: 'getConnector', method: 'get', path: '/connectors/{name}', tag: 'Sources', summary: 'Get a connector', auth: { scopes: ['data:read'] }, params: Type.Object({ name: Type.String({ minLength: 1 }) }), responses: { 200: json('The connector.', Connector) }, errors: ['route_not_found'] }),
  listSources: defineRoute({ operationId: 'listSources', method: 'get', path: '/sources', tag: 'Sources', summary: 'List sources', auth: { scopes: ['data:read'] }, query: page(), paramErrors: cursorErrors, responses: { 200: json('A page of sources.', List(Source)) }, errors: ['invalid_cursor'] }),
  createSource: defineRoute({
    operationId: 'createSource', method: 'post', path: '/sources', tag: 'Sources', summary: 'Connect a source',
    auth: { scopes: ['apps:manage'] }, body: SourceCreation, invalidBodyCode: 'invalid_source_parameters',
    responses: { 201: json('The source, its tables discovered.', Source, ['Location']) }, errors: ['invalid_source_parameters', 'source_name_conflict', 'host_not_allowed'],
  }),
  getSource: defineRoute({ operationId: 'getSource', method: 'get', path: '/sources/{id}', tag: 'Sources', summary: 'Get a source', auth: { scopes: ['data:read'] }, params: id('A source id (src_…).'), responses: { 200: json('The source.', Source) }, errors: ['source_not_found'] }),
  updateSource: defineRoute({
    operationId: 'updateSource', method: 'patch', path: '/sources/{id}', tag: 'Sources', summary: 'Change, pause or resume a source',
    auth: { scopes: ['apps:manage'] }, params: id('A source id.'), body: SourceChange, invalidBodyCode: 'invalid_source_parameters',
    responses: { 200: json('The source as changed.', Source) }, errors: ['source_not_found', 'invalid_source_parameters', 'source_name_conflict', 'source_config_unavailable', 'source_pause_failed', 'host_not_allowed'],
  }),
  deleteSource: defineRoute({ operationId: 'deleteSource', method: 'delete', path: '/sources/{id}', tag: 'Sources', summary: 'Delete a source (its lake tables stay)', auth: { scopes: ['apps:manage'] }, params: id('A source id.'), responses: { 200: json('The deletion.', SourceDeletion) }, errors: ['source_not_found', 'source_config_unavailable'] }),
  testSource: defineRoute({ operationId: 'testSource', method: 'post', path: '/sources/{id}/test', tag: 'Sources', summary: "Test a source's connection", auth: { scopes: ['apps:manage'] }, params: id('A source id.'), responses: { 200: json('The outcome, with a generic reason when it failed.', SourceTest) }, errors: ['source_not_found'] }),
  startSync: defineRoute({
    operationId: 'startSync', method: 'post', path: '/sources/{id}/sync', tag: 'Syncs', summary: 'Sync a source into the lake',
    auth: { scopes: ['apps:manage'] }, params: id('A source id.'), body: SyncRequestBody, requestHeaders: ['Idempotency-Key'],
    responses: { 202: json('The sync, queued or running.', Sync, ['Location', 'Idempotent-Replayed']) }, errors: ['source_not_found', 'source_paused', 'sync_in_progress', 'idempotency_key_reused'],
  }),
  createSyncStreamUrl: defineRoute({
    operationId: 'createSyncStreamUrl', method: 'post', path: '/sources/{id}/sync/stream_url', tag: 'Syncs', summary: "A 5-minute URL for the source's sync stream, for EventSource",
    auth: { scopes: ['data:read'] }, params: id('A source id.'), responses: { 200: json('The stream URL.', StreamUrl) }, errors: ['source_not_found'],
  }),
  streamSync: defineRoute({
    operationId: 'streamSync', method: 'get', path: '/sources/{id}/sync/stream', tag: 'Syncs', summary: "Follow the source's latest sync (SSE)",
    auth: { scopes: ['data:read'], streamToken: true }, params: id('A source id.'), requestHeaders: ['Last-Event-ID'],
    responses: { 200: events, 204: { description: 'The source has never synced, or its latest sync ended before Last-Event-ID.' } }, errors: ['source_not_found', 'invalid_last_event_id'],
  }),
  listLogs: defineRoute({
    operationId: 'listLogs', method: 'get', path: '/logs', tag: 'Sources', summary: 'Schema changes and errors of syncs',
    auth: { scopes: ['logs:read'] },
    paramErrors: cursorErrors,
    query: Type.Object({
      ...pageQuery(50, 200),
      source: Type.Optional(Type.String({ description: 'Only this source.' })),
      kind: Type.Optional(Type.String({ description: 'Only this kind (schema_change, error).' })),
      since: Type.Optional(Type.Integer({ minimum: 0, maximum: 999_999_999_999, description: 'Only entries at or after this time, epoch seconds.' })),
    }),
    responses: { 200: json('A page of log entries.', List(LogEntry)) }, errors: ['invalid_cursor'],
  }),
};

const keyRoutes = (path: string, name: string, object: typeof ServiceKey | typeof TeamApiKey, body: typeof ServiceKeyCreation | typeof TeamKeyCreation, what: string) => ({
  create: defineRoute({ operationId: `create${name}`, method: 'post', path, tag: 'Keys', summary: `Create a ${what} (the secret is shown once)`, auth: { scopes: ['keys:manage'] }, body, responses: { 201: json(`The ${what} with its secret.`, object, ['Location']) }, errors: ['owner_required', 'missing_scope'] }),
  list: defineRoute({ operationId: `list${name}s`, method: 'get', path, tag: 'Keys', summary: `List ${what}s`, auth: { scopes: ['keys:manage'] }, query: page(), paramErrors: cursorErrors, responses: { 200: json(`A page of ${what}s.`, List(object)) }, errors: ['owner_required', 'invalid_cursor'] }),
  revoke: defineRoute({ operationId: `revoke${name}`, method: 'post', path: `${path}/{id}/revoke`, tag: 'Keys', summary: `Revoke a ${what}`, auth: { scopes: ['keys:manage'] }, params: id(`A ${what} id.`), responses: { 200: json(`The revoked ${what}.`, object) }, errors: ['owner_required', 'key_not_found'] }),
});

export const CREDENTIAL_ROUTES = {
  createPersonalAccessToken: defineRoute({ operationId: 'createPersonalAccessToken', method: 'post', path: '/pats', tag: 'Keys', summary: 'Create a personal access token (the secret is shown once)', auth: { scopes: ['pats:manage'] }, body: TokenCreation, responses: { 201: json('The token with its secret.', PersonalAccessToken, ['Location']) }, errors: ['user_required', 'missing_scope'] }),
  listPersonalAccessTokens: defineRoute({ operationId: 'listPersonalAccessTokens', method: 'get', path: '/pats', tag: 'Keys', summary: 'List your personal access tokens', auth: { scopes: ['pats:manage'] }, query: page(), paramErrors: cursorErrors, responses: { 200: json('A page of tokens.', List(PersonalAccessToken)) }, errors: ['user_required', 'invalid_cursor'] }),
  revokePersonalAccessToken: defineRoute({ operationId: 'revokePersonalAccessToken', method: 'post', path: '/pats/{id}/revoke', tag: 'Keys', summary: 'Revoke a personal access token', auth: { scopes: ['pats:manage'] }, params: id('A token id.'), responses: { 200: json('The revoked token.', PersonalAccessToken) }, errors: ['user_required', 'pat_not_found'] }),
  serviceKeys: keyRoutes('/service-keys', 'ServiceKey', ServiceKey, ServiceKeyCreation, 'service key'),
  teamKeys: keyRoutes('/team-keys', 'TeamApiKey', TeamApiKey, TeamKeyCreation, 'team API key'),
};

export const CANVAS_ROUTES = {
  createCanvas: defineRoute({ operationId: 'createCanvas', method: 'post', path: '/canvases', tag: 'Canvases', summary: 'Create a canvas', auth: { scopes: ['canvases:manage'] }, body: CanvasCreation, responses: { 201: json('The canvas.', Canvas, ['Location']) }, errors: ['grant_table_denied'] }),
  listCanvases: defineRoute({ operationId: 'listCanvases', method: 'get', path: '/canvases', tag: 'Canvases', summary: 'List canvases', auth: { scopes: ['canvases:read'] }, query: page(), paramErrors: cursorErrors, responses: { 200: json('A page of canvases.', List(Canvas)) }, errors: ['invalid_cursor'] }),
  getCanvas: defineRoute({ operationId: 'getCanvas', method: 'get', path: '/canvases/{id}', tag: 'Canvases', summary: 'Get a canvas', auth: { scopes: ['canvases:read'] }, params: id('A canvas id (cnv_…).'), responses: { 200: json('The canvas.', Canvas) }, errors: ['canvas_not_found'] }),
  addCanvasElement: defineRoute({ operationId: 'addCanvasElement', method: 'post', path: '/canvases/{id}/elements', tag: 'Canvases', summary: 'Add a table element', auth: { scopes: ['canvases:manage'] }, params: id('A canvas id.'), body: ElementInput, responses: { 201: json('The element.', CanvasElement) }, errors: ['canvas_not_found', 'creator_required', 'grant_table_denied'] }),
  downloadTableData: defineRoute({
    operationId: 'downloadTableData', method: 'post', path: '/data/table', tag: 'Canvases', summary: "Legacy: a canvas element's table, with a team API key",
    auth: { teamKey: 'only' }, body: TableDataRequest, responses: { 200: json("The element's rows.", TableData) }, errors: ['canvas_not_found', 'element_not_found', 'element_query_failed'],
  }),
};

export const SEND_ROUTES = {
  listSends: defineRoute({ operationId: 'listSends', method: 'get', path: '/sends', tag: 'Sends', summary: 'List sends', auth: { scopes: ['sends:read'] }, query: page(), paramErrors: cursorErrors, responses: { 200: json('A page of sends.', List(Send)) }, errors: ['invalid_cursor'] }),
  createSend: defineRoute({ operationId: 'createSend', method: 'post', path: '/sends', tag: 'Sends', summary: 'Create a send', auth: { scopes: ['sends:manage'] }, body: SendCreation, responses: { 201: json('The send; a generated webhook signing secret is shown here once.', Send, ['Location']) }, errors: ['write_not_allowed', 'multiple_statements', 'forbidden_function', 'grant_table_denied', 'host_not_allowed'] }),
  getSend: defineRoute({ operationId: 'getSend', method: 'get', path: '/sends/{id}', tag: 'Sends', summary: 'Get a send', auth: { scopes: ['sends:read'] }, params: id('A send id (snd_…).'), responses: { 200: json('The send and its last run.', Send) }, errors: ['send_not_found'] }),
  updateSend: defineRoute({ operationId: 'updateSend', method: 'patch', path: '/sends/{id}', tag: 'Sends', summary: 'Change, pause or resume a send', auth: { scopes: ['sends:manage'] }, params: id('A send id.'), body: SendChange, responses: { 200: json('The send as changed.', Send) }, errors: ['send_not_found', 'creator_required', 'host_not_allowed'] }),
  deleteSend: defineRoute({ operationId: 'deleteSend', method: 'delete', path: '/sends/{id}', tag: 'Sends', summary: 'Delete a send', auth: { scopes: ['sends:manage'] }, params: id('A send id.'), responses: { 200: json('The deletion.', SendDeletion) }, errors: ['send_not_found', 'creator_required'] }),
  runSend: defineRoute({ operationId: 'runSend', method: 'post', path: '/sends/{id}/run', tag: 'Sends', summary: 'Run a send now', auth: { scopes: ['sends:manage'] }, params: id('A send id.'), responses: { 202: json('The run, queued or running.', SendRun, ['Location']) }, errors: ['send_not_found', 'creator_required', 'send_paused', 'send_in_progress'] }),
  listSendRuns: defineRoute({ operationId: 'listSendRuns', method: 'get', path: '/sends/{id}/runs', tag: 'Sends', summary: "List a send's runs", auth: { scopes: ['sends:read'] }, params: id('A send id.'), query: page(), paramErrors: cursorErrors, responses: { 200: json('A page of runs.', List(SendRun)) }, errors: ['send_not_found', 'invalid_cursor'] }),
  getSendRun: defineRoute({ operationId: 'getSendRun', method: 'get', path: '/sends/{id}/runs/{run}', tag: 'Sends', summary: 'Get a send run', auth: { scopes: ['sends:read'] }, params: Type.Object({ id: Type.String({ minLength: 1 }), run: Type.String({ minLength: 1 }) }), responses: { 200: json('The run.', SendRun) }, errors: ['send_not_found', 'send_run_not_found'] }),
};

export const SERVICE_ROUTES = {
  getVersion: defineRoute({ operationId: 'getVersion', method: 'get', path: '/version', tag: 'Service', summary: 'API and server version', auth: { public: true, probe: true }, responses: { 200: json('The versions.', Version) } }),
  getHealth: defineRoute({ operationId: 'getHealth', method: 'get', path: '/healthz', tag: 'Service', summary: 'Liveness: the process answers (for a load balancer or orchestrator)', auth: { public: true, probe: true }, responses: { 200: json('The process is alive.', Health) } }),
  getReadiness: defineRoute({ operationId: 'getReadiness', method: 'get', path: '/readyz', tag: 'Service', summary: 'Readiness: the metadata store answers and the server is not shutting down', auth: { public: true, probe: true }, responses: { 200: json('Ready for work.', Readiness) }, errors: ['service_unavailable'] }),
  whoAmI: defineRoute({ operationId: 'whoAmI', method: 'get', path: '/whoami', tag: 'Service', summary: 'The calling credential, its organization and scopes', auth: { teamKey: 'also' }, responses: { 200: json('Who is calling.', WhoAmI) } }),
  getErrorCode: defineRoute({ operationId: 'getErrorCode', method: 'get', path: '/errors/{code}', tag: 'Service', summary: 'Explain an error code', auth: { public: true }, params: Type.Object({ code: Type.String({ minLength: 1 }) }), responses: { 200: json('The code, its status and what to do.', ErrorCodeInfo) }, errors: ['error_code_not_found'] }),
  getUsage: defineRoute({
    operationId: 'getUsage', method: 'get', path: '/usage', tag: 'Service', summary: "The organization's usage and cost for a month",
    auth: { scopes: ['usage:read'] }, query: Type.Object({ month: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}$', description: 'YYYY-MM; the current month when absent.' })) }),
    responses: { 200: json('Usage by day, totals and cost.', Usage) },
  }),
  downloadResultFile: defineRoute({
    operationId: 'downloadResultFile', method: 'get', path: '/files/results/{id}', tag: 'Queries', summary: 'Download a result file by signed URL (GET or HEAD; Range supported)',
    auth: { public: true }, params: id('A query id.'), requestHeaders: ['Range'],
    query: Type.Object({ expires: Type.Optional(Type.String()), signature: Type.Optional(Type.String()) }),
    responses: {
      200: { description: 'The Parquet file.', contentType: 'application/vnd.apache.parquet', headers: ['Accept-Ranges', 'ETag'] },
      206: { description: 'The requested byte range.', contentType: 'application/vnd.apache.parquet', headers: ['Accept-Ranges', 'ETag', 'Content-Range'] },
    },
    errors: ['signed_url_invalid', 'signed_url_expired', 'range_not_satisfiable'],
  }),
  getOpenApiDocument: defineRoute({ operationId: 'getOpenApiDocument', method: 'get', path: '/openapi.json', tag: 'Service', summary: 'This document (OpenAPI 3.1)', auth: { public: true }, responses: { 200: { description: 'The OpenAPI document.', schema: Type.Object({ openapi: Type.String() }, { additionalProperties: true }) } } }),
  getApiReference: defineRoute({ operationId: 'getApiReference', method: 'get', path: '/reference', tag: 'Service', summary: 'A readable reference page of this document (no external assets)', auth: { public: true }, responses: { 200: { description: 'An HTML page.', contentType: 'text/html' } } }),
};

const { serviceKeys, teamKeys, ...tokenRoutes } = CREDENTIAL_ROUTES;

/** Every route, in the order the document lists them. */
export const ROUTES: readonly RouteContract[] = [
  ...Object.values(SERVICE_ROUTES), ...Object.values(QUERY_ROUTES), ...Object.values(CATALOG_ROUTES), ...Object.values(JOB_ROUTES),
  ...Object.values(SOURCE_ROUTES), ...Object.values(tokenRoutes), ...Object.values(serviceKeys), ...Object.values(teamKeys),
  ...Object.values(CANVAS_ROUTES), ...Object.values(SEND_ROUTES),
];
