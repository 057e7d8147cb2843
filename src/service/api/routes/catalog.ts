import type { Hono } from 'hono';
import type { CatalogEntry, SchemaSummary } from '../../catalog/catalog-service.js';
import type { ApiEnv } from '../env.js';
import { CATALOG_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';

const { listSchemas, listTables, getTable } = CATALOG_ROUTES;

function schemaObject(schema: SchemaSummary): object {
  return {
    object: 'schema',
    name: schema.name,
    qualified_name: `lake.${schema.name}`,
    table_count: schema.tableCount,
    view_count: schema.viewCount,
    updated: schema.updated,
  };
}

function summaryObject(entry: CatalogEntry): object {
  return {
    object: 'table_summary',
    kind: entry.kind,
    schema: entry.schema,
    name: entry.name,
    qualified_name: `lake.${entry.schema}.${entry.name}`,
    column_count: entry.columns.length,
    row_count: entry.rowCount,
    bytes: entry.bytes,
    updated: entry.updated,
  };
}

/** The spec's table description, plus what people look for next (kind, size, freshness, a view's SQL). */
function tableObject(entry: CatalogEntry): object {
  return {
    object: 'table',
    kind: entry.kind,
    schema: entry.schema,
    name: entry.name,
    qualified_name: `lake.${entry.schema}.${entry.name}`,
    columns: entry.columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable })),
    row_count: entry.rowCount,
    bytes: entry.bytes,
    updated: entry.updated,
    ...(entry.sql === undefined ? {} : { sql: entry.sql }),
  };
}

const list = (data: object[]): object => ({ object: 'list', data, has_more: false, next_cursor: null });

export function catalogRoutes(app: Hono<ApiEnv>): void {
  mount(app, listSchemas, async (c) => c.json(list((await c.get('services').catalog.schemas(c.get('principal'))).map(schemaObject))));
  // Path segments arrive decoded, so schema and table names may hold dots, spaces or (encoded) slashes.
  mount(app, listTables, async (c, { params }) => c.json(list((await c.get('services').catalog.entries(c.get('principal'), params.schema)).map(summaryObject))));
  mount(app, getTable, async (c, { params }) => c.json(tableObject(await c.get('services').catalog.describe(c.get('principal'), params.schema, params.table))));
}
