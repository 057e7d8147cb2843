/**
 * The DuckLake 1.0 catalog, table by table and column by column, as the `ducklake` extension of DuckDB 1.5 creates
 * it (duckdb/ducklake, branch v1.5-variegata, src/storage/ducklake_metadata_manager.cpp, InitializeDuckLake). The
 * types are DuckDB's names; each metadata store spells them its own way (ducklakeTypeIn).
 */
export type DuckLakeType = 'BIGINT' | 'VARCHAR' | 'BOOLEAN' | 'UUID' | 'TIMESTAMPTZ';

export interface DuckLakeTableDefinition {
  name: string;
  columns: readonly (readonly [name: string, type: DuckLakeType, constraint?: 'PRIMARY KEY' | 'NOT NULL'])[];
}

const B = 'BIGINT';
const V = 'VARCHAR';
const BOOL = 'BOOLEAN';

export const DUCKLAKE_TABLES: readonly DuckLakeTableDefinition[] = [
  {
    name: 'ducklake_metadata',
    columns: [
      ['key', V, 'NOT NULL'],
      ['value', V, 'NOT NULL'],
      ['scope', V],
      ['scope_id', B],
    ],
  },
  {
    name: 'ducklake_snapshot',
    columns: [
      ['snapshot_id', B, 'PRIMARY KEY'],
      ['snapshot_time', 'TIMESTAMPTZ'],
      ['schema_version', B],
      ['next_catalog_id', B],
      ['next_file_id', B],
    ],
  },
  {
    name: 'ducklake_snapshot_changes',
    columns: [
      ['snapshot_id', B, 'PRIMARY KEY'],
      ['changes_made', V],
      ['author', V],
      ['commit_message', V],
      ['commit_extra_info', V],
    ],
  },
  {
    name: 'ducklake_schema',
    columns: [
      ['schema_id', B, 'PRIMARY KEY'],
      ['schema_uuid', 'UUID'],
      ['begin_snapshot', B],
      ['end_snapshot', B],
      ['schema_name', V],
      ['path', V],
      ['path_is_relative', BOOL],
    ],
  },
  {
    name: 'ducklake_table',
    columns: [
      ['table_id', B],
      ['table_uuid', 'UUID'],
      ['begin_snapshot', B],
      ['end_snapshot', B],
      ['schema_id', B],
      ['table_name', V],
      ['path', V],
      ['path_is_relative', BOOL],
    ],
  },
  {
    name: 'ducklake_view',
    columns: [
      ['view_id', B],
      ['view_uuid', 'UUID'],
      ['begin_snapshot', B],
      ['end_snapshot', B],
      ['schema_id', B],
      ['view_name', V],
      ['dialect', V],
      ['sql', V],
      ['column_aliases', V],
    ],
  },
  {
    name: 'ducklake_tag',
    columns: [
      ['object_id', B],
      ['begin_snapshot', B],
      ['end_snapshot', B],
      ['key', V],
      ['value', V],
    ],
  },
  {
    name: 'ducklake_column_tag',
    columns: [
      ['table_id', B],
      ['column_id', B],
      ['begin_snapshot', B],
      ['end_snapshot', B],
      ['key', V],
      ['value', V],
    ],
  },
  {
    name: 'ducklake_data_file',
    columns: [
      ['data_file_id', B, 'PRIMARY KEY'],
      ['table_id', B],
      ['begin_snapshot', B],
      ['end_snapshot', B],
      ['file_order', B],
      ['path', V],
      ['path_is_relative', BOOL],
      ['file_format', V],
      ['record_count', B],
      ['file_size_bytes', B],
      ['footer_size', B],
      ['row_id_start', B],
      ['partition_id', B],
      ['encryption_key', V],
      ['mapping_id', B],
      ['partial_max', B],
    ],
  },
  {
    name: 'ducklake_file_column_stats',
    columns: [
      ['data_file_id', B],
      ['table_id', B],
      ['column_id', B],
      ['column_size_bytes', B],
      ['value_count', B],
      ['null_count', B],
      ['min_value', V],
      ['max_value', V],
      ['contains_nan', BOOL],
      ['extra_stats', V],
    ],
  },
  {
    name: 'ducklake_file_variant_stats',
    columns: [
      ['data_file_id', B],
      ['table_id', B],
      ['column_id', B],
      ['variant_path', V],
      ['shredded_type', V],
      ['column_size_bytes', B],
      ['value_count', B],
      ['null_count', B],
      ['min_value', V],
      ['max_value', V],
      ['contains_nan', BOOL],
      ['extra_stats', V],
    ],
  },
  {
    name: 'ducklake_delete_file',
    columns: [
      ['delete_file_id', B, 'PRIMARY KEY'],
      ['table_id', B],
      ['begin_snapshot', B],
      ['end_snapshot', B],
      ['data_file_id', B],
      ['path', V],
      ['path_is_relative', BOOL],
      ['format', V],
      ['delete_count', B],
      ['file_size_bytes', B],
      ['footer_size', B],
      ['encryption_key', V],
      ['partial_max', B],
    ],
  },
  {
    name: 'ducklake_column',
    columns: [
      ['column_id', B],
      ['begin_snapshot', B],
      ['end_snapshot', B],
      ['table_id', B],
      ['column_order', B],
      ['column_name', V],
      ['column_type', V],
      ['initial_default', V],
      ['default_value', V],
      ['nulls_allowed', BOOL],
      ['parent_column', B],
      ['default_value_type', V],
      ['default_value_dialect', V],
    ],
  },
  {
    name: 'ducklake_table_stats',
    columns: [
      ['table_id', B],
      ['record_count', B],
      ['next_row_id', B],
      ['file_size_bytes', B],
    ],
  },
  {
    name: 'ducklake_table_column_stats',
    columns: [
      ['table_id', B],
      ['column_id', B],
      ['contains_null', BOOL],
      ['contains_nan', BOOL],
      ['min_value', V],
      ['max_value', V],
      ['extra_stats', V],
    ],
  },
  {
    name: 'ducklake_partition_info',
    columns: [
      ['partition_id', B],
      ['table_id', B],
      ['begin_snapshot', B],
      ['end_snapshot', B],
    ],
  },
  {
    name: 'ducklake_partition_column',
    columns: [
      ['partition_id', B],
      ['table_id', B],
      ['partition_key_index', B],
      ['column_id', B],
      ['transform', V],
    ],
  },
  {
    name: 'ducklake_file_partition_value',
    columns: [
      ['data_file_id', B],
      ['table_id', B],
      ['partition_key_index', B],
      ['partition_value', V],
    ],
  },
  {
    name: 'ducklake_files_scheduled_for_deletion',
    columns: [
      ['data_file_id', B],
      ['path', V],
      ['path_is_relative', BOOL],
      ['schedule_start', 'TIMESTAMPTZ'],
    ],
  },
  {
    name: 'ducklake_inlined_data_tables',
    columns: [
      ['table_id', B],
      ['table_name', V],
      ['schema_version', B],
    ],
  },
  {
    name: 'ducklake_column_mapping',
    columns: [
      ['mapping_id', B],
      ['table_id', B],
      ['type', V],
    ],
  },
  {
    name: 'ducklake_name_mapping',
    columns: [
      ['mapping_id', B],
      ['column_id', B],
      ['source_name', V],
      ['target_field_id', B],
      ['parent_column', B],
      ['is_partition', BOOL],
    ],
  },
  {
    name: 'ducklake_schema_versions',
    columns: [
      ['begin_snapshot', B],
      ['schema_version', B],
      ['table_id', B],
    ],
  },
  {
    name: 'ducklake_macro',
    columns: [
      ['schema_id', B],
      ['macro_id', B],
      ['macro_name', V],
      ['begin_snapshot', B],
      ['end_snapshot', B],
    ],
  },
  {
    name: 'ducklake_macro_impl',
    columns: [
      ['macro_id', B],
      ['impl_id', B],
      ['dialect', V],
      ['sql', V],
      ['type', V],
    ],
  },
  {
    name: 'ducklake_macro_parameters',
    columns: [
      ['macro_id', B],
      ['impl_id', B],
      ['column_id', B],
      ['parameter_name', V],
      ['parameter_type', V],
      ['default_value', V],
      ['default_value_type', V],
    ],
  },
  {
    name: 'ducklake_sort_info',
    columns: [
      ['sort_id', B],
      ['table_id', B],
      ['begin_snapshot', B],
      ['end_snapshot', B],
    ],
  },
  {
    name: 'ducklake_sort_expression',
    columns: [
      ['sort_id', B],
      ['table_id', B],
      ['sort_key_index', B],
      ['expression', V],
      ['dialect', V],
      ['sort_direction', V],
      ['null_order', V],
    ],
  },
];

/**
 * A DuckLake type as a metadata store declares it. PostgreSQL takes DuckDB's names as they are but TIMESTAMPTZ,
 * which it spells out; DuckDB's sqlite extension writes a DuckDB type's full name as the declared type, so SQLite
 * gets the same spelling and DuckDB reads the column back with its type.
 */
export function ducklakeTypeIn(type: DuckLakeType): string {
  return type === 'TIMESTAMPTZ' ? 'TIMESTAMP WITH TIME ZONE' : type;
}

/** The CREATE TABLE statements of the catalog, in `prefix` (a PostgreSQL schema and a dot; empty for SQLite). */
export function createCatalogStatements(prefix: string): string[] {
  return DUCKLAKE_TABLES.map(
    (table) =>
      `CREATE TABLE IF NOT EXISTS ${prefix}${table.name}(${table.columns
        .map(([name, type, constraint]) => `${name} ${ducklakeTypeIn(type)}${constraint ? ` ${constraint}` : ''}`)
        .join(', ')})`,
  );
}
