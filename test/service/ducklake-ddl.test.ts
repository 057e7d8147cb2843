import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalogStatements } from '../../src/service/storage/ducklake/ducklake-ddl.js';
import { adminQuery, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

/**
 * Facts of the DuckLake 1.0 catalog: the CREATE TABLE statements the ducklake extension for DuckDB 1.5 runs when it
 * creates a catalog (duckdb/ducklake, branch v1.5-variegata, src/storage/ducklake_metadata_manager.cpp,
 * DuckLakeMetadataManager::InitializeDuckLake), with its {METADATA_CATALOG} prefix left out.
 */
const EXTENSION_DDL = [
  'CREATE TABLE ducklake_metadata(key VARCHAR NOT NULL, value VARCHAR NOT NULL, scope VARCHAR, scope_id BIGINT);',
  'CREATE TABLE ducklake_snapshot(snapshot_id BIGINT PRIMARY KEY, snapshot_time TIMESTAMPTZ, schema_version BIGINT, next_catalog_id BIGINT, next_file_id BIGINT);',
  'CREATE TABLE ducklake_snapshot_changes(snapshot_id BIGINT PRIMARY KEY, changes_made VARCHAR, author VARCHAR, commit_message VARCHAR, commit_extra_info VARCHAR);',
  'CREATE TABLE ducklake_schema(schema_id BIGINT PRIMARY KEY, schema_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN);',
  'CREATE TABLE ducklake_table(table_id BIGINT, table_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_id BIGINT, table_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN);',
  'CREATE TABLE ducklake_view(view_id BIGINT, view_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_id BIGINT, view_name VARCHAR, dialect VARCHAR, sql VARCHAR, column_aliases VARCHAR);',
  'CREATE TABLE ducklake_tag(object_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, key VARCHAR, value VARCHAR);',
  'CREATE TABLE ducklake_column_tag(table_id BIGINT, column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, key VARCHAR, value VARCHAR);',
  'CREATE TABLE ducklake_data_file(data_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, file_order BIGINT, path VARCHAR, path_is_relative BOOLEAN, file_format VARCHAR, record_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, row_id_start BIGINT, partition_id BIGINT, encryption_key VARCHAR, mapping_id BIGINT, partial_max BIGINT);',
  'CREATE TABLE ducklake_file_column_stats(data_file_id BIGINT, table_id BIGINT, column_id BIGINT, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN, extra_stats VARCHAR);',
  'CREATE TABLE ducklake_file_variant_stats(data_file_id BIGINT, table_id BIGINT, column_id BIGINT, variant_path VARCHAR, shredded_type VARCHAR, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN, extra_stats VARCHAR);',
  'CREATE TABLE ducklake_delete_file(delete_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, data_file_id BIGINT, path VARCHAR, path_is_relative BOOLEAN, format VARCHAR, delete_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, encryption_key VARCHAR, partial_max BIGINT);',
  'CREATE TABLE ducklake_column(column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, table_id BIGINT, column_order BIGINT, column_name VARCHAR, column_type VARCHAR, initial_default VARCHAR, default_value VARCHAR, nulls_allowed BOOLEAN, parent_column BIGINT, default_value_type VARCHAR, default_value_dialect VARCHAR);',
  'CREATE TABLE ducklake_table_stats(table_id BIGINT, record_count BIGINT, next_row_id BIGINT, file_size_bytes BIGINT);',
  'CREATE TABLE ducklake_table_column_stats(table_id BIGINT, column_id BIGINT, contains_null BOOLEAN, contains_nan BOOLEAN, min_value VARCHAR, max_value VARCHAR, extra_stats VARCHAR);',
  'CREATE TABLE ducklake_partition_info(partition_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT);',
  'CREATE TABLE ducklake_partition_column(partition_id BIGINT, table_id BIGINT, partition_key_index BIGINT, column_id BIGINT, transform VARCHAR);',
  'CREATE TABLE ducklake_file_partition_value(data_file_id BIGINT, table_id BIGINT, partition_key_index BIGINT, partition_value VARCHAR);',
  'CREATE TABLE ducklake_files_scheduled_for_deletion(data_file_id BIGINT, path VARCHAR, path_is_relative BOOLEAN, schedule_start TIMESTAMPTZ);',
  'CREATE TABLE ducklake_inlined_data_tables(table_id BIGINT, table_name VARCHAR, schema_version BIGINT);',
  'CREATE TABLE ducklake_column_mapping(mapping_id BIGINT, table_id BIGINT, type VARCHAR);',
  'CREATE TABLE ducklake_name_mapping(mapping_id BIGINT, column_id BIGINT, source_name VARCHAR, target_field_id BIGINT, parent_column BIGINT, is_partition BOOLEAN);',
  'CREATE TABLE ducklake_schema_versions(begin_snapshot BIGINT, schema_version BIGINT, table_id BIGINT);',
  'CREATE TABLE ducklake_macro(schema_id BIGINT, macro_id BIGINT, macro_name VARCHAR, begin_snapshot BIGINT, end_snapshot BIGINT);',
  'CREATE TABLE ducklake_macro_impl(macro_id BIGINT, impl_id BIGINT, dialect VARCHAR, sql VARCHAR, type VARCHAR);',
  'CREATE TABLE ducklake_macro_parameters(macro_id BIGINT, impl_id BIGINT,column_id BIGINT, parameter_name VARCHAR, parameter_type VARCHAR, default_value VARCHAR, default_value_type VARCHAR);',
  'CREATE TABLE ducklake_sort_info(sort_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT);',
  'CREATE TABLE ducklake_sort_expression(sort_id BIGINT, table_id BIGINT, sort_key_index BIGINT, expression VARCHAR, dialect VARCHAR, sort_direction VARCHAR, null_order VARCHAR);',
];

/** Each table's columns in order, with DuckDB's type names, from the statements above. */
function expected(): Map<string, [string, string][]> {
  const tables = new Map<string, [string, string][]>();
  for (const statement of EXTENSION_DDL) {
    const [, name = '', list = ''] = /^CREATE TABLE (\w+)\((.*)\);$/.exec(statement) ?? [];
    tables.set(
      name,
      list.split(',').map((column) => {
        const [columnName = '', type = ''] = column.trim().split(/\s+/);
        return [columnName, type];
      }),
    );
  }
  return tables;
}

/** How each store reports a DuckDB type once the catalog is created in it. */
const SQLITE_TYPE: Record<string, string> = {
  BIGINT: 'BIGINT',
  VARCHAR: 'VARCHAR',
  BOOLEAN: 'BOOLEAN',
  UUID: 'UUID',
  TIMESTAMPTZ: 'TIMESTAMP WITH TIME ZONE',
};
const POSTGRES_TYPE: Record<string, string> = {
  BIGINT: 'bigint',
  VARCHAR: 'character varying',
  BOOLEAN: 'boolean',
  UUID: 'uuid',
  TIMESTAMPTZ: 'timestamp with time zone',
};

describe('the DuckLake catalog lake creates is the one the v1.5 extension creates', () => {
  let db: TestDatabase;
  const dir = mkdtempSync(join(tmpdir(), 'lake-ducklake-ddl-'));
  beforeAll(async () => {
    db = await createTestDatabase();
  }, 60_000);
  afterAll(async () => {
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('in SQLite: every table, every column in order, with its type', () => {
    const sqlite = new Database(join(dir, 'catalog.sqlite'));
    try {
      for (const statement of createCatalogStatements('')) sqlite.exec(statement);
      const made = sqlite
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .all()
        .map((row) => (row as { name: string }).name);
      expect(made).toEqual([...expected().keys()].sort());
      for (const [table, columns] of expected()) {
        const info = sqlite.prepare(`PRAGMA table_info(${table})`).all() as { name: string; type: string }[];
        expect(
          info.map((c) => [c.name, c.type]),
          table,
        ).toEqual(columns.map(([name, type]) => [name, SQLITE_TYPE[type]]));
      }
    } finally {
      sqlite.close();
    }
  });

  it('in a PostgreSQL schema (the METADATA_SCHEMA form): every table, every column in order, with its type', async () => {
    await adminQuery('CREATE SCHEMA ducklake_test', db.database);
    for (const statement of createCatalogStatements('ducklake_test.')) await adminQuery(statement, db.database);
    const rows = (
      await adminQuery(
        "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'ducklake_test' ORDER BY table_name, ordinal_position",
        db.database,
      )
    ).rows as { table_name: string; column_name: string; data_type: string }[];
    const made = new Map<string, [string, string][]>();
    for (const row of rows)
      made.set(row.table_name, [...(made.get(row.table_name) ?? []), [row.column_name, row.data_type]]);
    expect([...made.keys()].sort()).toEqual([...expected().keys()].sort());
    for (const [table, columns] of expected())
      expect(made.get(table), table).toEqual(columns.map(([name, type]) => [name, POSTGRES_TYPE[type]]));
  });
});
