/** The API's routes: Queries and the catalog. */
import { DuckLakeAttach, SchemaSummary, Table, TableSummary, TableVersion } from './catalog.js';
import { Query, QueryFormat, QueryStatus, QuerySubmission, ResultFileFormat } from './queries.js';
import { defineRoute } from './route.js';
import { List, pageQuery, Type } from './schema.js';
import { cursorErrors, id, json } from './route-helpers.js';

export const QUERY_ROUTES = {
  listQueries: defineRoute({
    operationId: 'listQueries',
    method: 'get',
    path: '/queries',
    tag: 'Queries',
    summary: 'Query history, newest first',
    description:
      "Lake's addition. The caller's own queries; owners and admins may list everyone's (creator=all) or one principal's. No result fields: GET /queries/{id} has those.",
    auth: { scopes: ['query:read'] },
    query: Type.Object({
      ...pageQuery(20, 100),
      status: Type.Optional(QueryStatus),
      created_after: Type.Optional(
        Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'Created at or after, epoch seconds.' }),
      ),
      created_before: Type.Optional(
        Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'Created before, epoch seconds.' }),
      ),
      creator: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 64,
          description: "me (the default), all, or a user's or key's id (owners and admins for any but their own).",
        }),
      ),
      q: Type.Optional(
        Type.String({ minLength: 1, maxLength: 200, description: 'A piece of the SQL, matched ignoring case.' }),
      ),
      tag: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only queries with this tag.' })),
    }),
    paramErrors: cursorErrors,
    responses: { 200: json('A page of queries.', List(Query)) },
    errors: ['invalid_cursor', 'owner_required'],
  }),
  createQuery: defineRoute({
    operationId: 'createQuery',
    method: 'post',
    path: '/queries',
    tag: 'Queries',
    summary: 'Submit a query',
    description:
      'Answers at once (202) with the query running or queued; a dry run (200) once it is checked. A replayed Idempotency-Key returns the original query with Idempotent-Replayed: true.',
    auth: { scopes: ['query:read'] },
    body: QuerySubmission,
    requestHeaders: ['Idempotency-Key'],
    responses: {
      200: json('A dry run, ended: its columns and their types (result_columns), or its error.', Query, [
        'Location',
        'Idempotent-Replayed',
      ]),
      202: json('The query, running or queued.', Query, ['Location', 'Idempotent-Replayed']),
    },
    errors: [
      'write_not_allowed',
      'multiple_statements',
      'forbidden_function',
      'sql_too_long',
      'grant_table_denied',
      'service_key_permissions_off',
      'grant_introspection_denied',
      'too_many_queries',
      'result_storage_full',
      'idempotency_key_reused',
    ],
  }),
  getQuery: defineRoute({
    operationId: 'getQuery',
    method: 'get',
    path: '/queries/{id}',
    tag: 'Queries',
    summary: 'Get a query and its result',
    auth: { scopes: ['query:read'] },
    params: id('A query id (qr_…).'),
    query: Type.Object({
      format: Type.Optional(QueryFormat),
      file_format: Type.Optional(ResultFileFormat),
      wait: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: 30,
          default: 0,
          description: 'Seconds to hold the request open while the query runs.',
        }),
      ),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Rows per page with format=inline.' }),
      ),
      starting_after: Type.Optional(
        Type.String({ minLength: 1, description: 'The next_cursor of the previous page.' }),
      ),
    }),
    paramErrors: { format: 'invalid_format', starting_after: 'invalid_cursor' },
    responses: { 200: json('The query; result fields once it succeeded.', Query) },
    errors: [
      'query_not_found',
      'invalid_format',
      'invalid_cursor',
      'inline_row_too_large',
      'result_storage_full',
      'service_unavailable',
    ],
  }),
};

export const CATALOG_ROUTES = {
  listSchemas: defineRoute({
    operationId: 'listSchemas',
    method: 'get',
    path: '/catalog',
    tag: 'Catalog',
    summary: 'List the lake schemas',
    auth: { scopes: ['data:read', 'query:read'] },
    responses: { 200: json('Schemas the credential may see.', List(SchemaSummary)) },
  }),
  listTables: defineRoute({
    operationId: 'listTables',
    method: 'get',
    path: '/catalog/{schema}',
    tag: 'Catalog',
    summary: "List a schema's tables and views",
    auth: { scopes: ['data:read', 'query:read'] },
    params: Type.Object({ schema: Type.String({ minLength: 1 }) }),
    responses: { 200: json('Tables and views the credential may see.', List(TableSummary)) },
    errors: ['catalog_not_found'],
  }),
  getTable: defineRoute({
    operationId: 'getTable',
    method: 'get',
    path: '/catalog/{schema}/{table}',
    tag: 'Catalog',
    summary: 'Describe a table or view',
    auth: { scopes: ['data:read', 'query:read'] },
    params: Type.Object({ schema: Type.String({ minLength: 1 }), table: Type.String({ minLength: 1 }) }),
    responses: { 200: json('The table and its columns.', Table) },
    errors: ['catalog_not_found'],
  }),
  getTableHistory: defineRoute({
    operationId: 'getTableHistory',
    method: 'get',
    path: '/catalog/{schema}/{table}/history',
    tag: 'Catalog',
    summary: "List a table's versions within retention (time travel)",
    description:
      "Lake's addition. Newest first, paged (next_cursor is the last version's snapshot_id); a query reads one with AT (VERSION => snapshot_id).",
    auth: { scopes: ['data:read', 'query:read'] },
    params: Type.Object({ schema: Type.String({ minLength: 1 }), table: Type.String({ minLength: 1 }) }),
    query: Type.Object(pageQuery(20, 100)),
    paramErrors: cursorErrors,
    responses: { 200: json('A page of the versions kept.', List(TableVersion)) },
    errors: ['catalog_not_found', 'invalid_cursor'],
  }),
  getDuckLakeAttach: defineRoute({
    operationId: 'getDuckLakeAttach',
    method: 'get',
    path: '/ducklake',
    tag: 'Catalog',
    summary: "How DuckDB attaches the organization's lake (DuckLake), read-only",
    description: "Lake's addition. Owners and admins only: it names where the lake's metadata and files live.",
    auth: { scopes: ['data:read'] },
    responses: { 200: json('The ATTACH statement and its parts.', DuckLakeAttach) },
    errors: ['owner_required'],
  }),
};
