import { Nullable, Strict, Timestamp, Type } from './schema.js';

const Kind = Type.Union([Type.Literal('table'), Type.Literal('view')]);

export const SchemaSummary = Strict({
  object: Type.Literal('schema'),
  name: Type.String(),
  qualified_name: Type.String({ description: '`lake.<schema>`.' }),
  table_count: Type.Integer({ minimum: 0 }),
  view_count: Type.Integer({ minimum: 0 }),
  updated: Nullable(Timestamp),
});

export const TableSummary = Strict({
  object: Type.Literal('table_summary'),
  kind: Kind,
  schema: Type.String(),
  name: Type.String(),
  qualified_name: Type.String({ description: '`lake.<schema>.<table>`.' }),
  column_count: Type.Integer({ minimum: 0 }),
  row_count: Nullable(Type.Integer({ minimum: 0 })),
  bytes: Nullable(Type.Integer({ minimum: 0 })),
  updated: Nullable(Timestamp),
});

export const Table = Strict(
  {
    object: Type.Literal('table'),
    kind: Kind,
    schema: Type.String(),
    name: Type.String(),
    qualified_name: Type.String(),
    columns: Type.Array(Strict({ name: Type.String(), type: Type.String(), nullable: Type.Boolean() })),
    row_count: Nullable(Type.Integer({ minimum: 0 })),
    bytes: Nullable(Type.Integer({ minimum: 0 })),
    updated: Nullable(Timestamp),
    sql: Type.Optional(Type.String({ description: "A view's defining SQL." })),
  },
  'A table or view of the lake and its columns.',
);

export const DuckLakeAttach = Strict(
  {
    object: Type.Literal('ducklake_attach'),
    catalog: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
    attach: Type.String({ description: "DuckDB's ATTACH statement for the organization's lake, read-only." }),
    metadata_schema: Type.String({ description: 'Where the catalog tables are: a PostgreSQL schema, or main.' }),
    data_path: Type.String({ description: 'The folder data and delete file paths are relative to.' }),
  },
  "How DuckDB attaches the organization's DuckLake catalog (lake's addition).",
);

export const TableVersion = Strict(
  {
    object: Type.Literal('table_version'),
    snapshot_id: Type.Integer({ minimum: 0, description: 'What AT (VERSION => snapshot_id) reads.' }),
    created: Timestamp,
    operation: Type.Union(
      [
        Type.Literal('created'),
        Type.Literal('replaced'),
        Type.Literal('merged'),
        Type.Literal('altered'),
        Type.Literal('dropped'),
        Type.Literal('kept'),
      ],
      { description: '`kept`: the oldest version retention keeps, written before its window.' },
    ),
    row_count: Nullable(Type.Integer({ minimum: 0 })),
  },
  "A version of a table still kept (lake's addition): a snapshot that changed it.",
);
