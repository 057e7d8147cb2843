import type { SchemaObject, TableObject, TableSummaryObject } from '../../../contract/types.js';
import type { CatalogEntry, SchemaSummary } from '../../catalog/catalog-service.js';

export function schemaObject(schema: SchemaSummary): SchemaObject {
  return {
    object: 'schema',
    name: schema.name,
    qualified_name: `lake.${schema.name}`,
    table_count: schema.tableCount,
    view_count: schema.viewCount,
    updated: schema.updated,
  };
}

export function summaryObject(entry: CatalogEntry): TableSummaryObject {
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
export function tableObject(entry: CatalogEntry): TableObject {
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
