import { join } from 'node:path';
import type { CatalogColumn, TableFileAt } from './ducklake/catalog-types.js';
import type { CatalogState, TableState } from './ducklake/catalog-state.js';
import { tableRowsSql } from './ducklake/data-files.js';
import { duckdbTypeOf } from './ducklake/types.js';
import type { CatalogStates } from './catalog-states.js';
import type { LakeLayout } from './layout.js';

export interface ColumnDescription {
  name: string;
  type: string;
  nullable: boolean;
}

/** How a table's rows are read at one snapshot: its columns by id and its files, as the DuckLake catalog says. */
export interface TableSource {
  columns: readonly CatalogColumn[];
  files: readonly TableFileAt[];
  mappings: ReadonlyMap<number, ReadonlyMap<number, string>>;
  /** The table's folder (absolute): its files' paths are relative to it. */
  directory: string;
  /** The snapshot since which the table has had its current columns (tableRowsSql). */
  columnsSince: number;
}

/** A table as one snapshot of its organization's DuckLake catalog has it. */
export interface TableVersion {
  /** The newest snapshot that changed the table. */
  id: number;
  /** Relative to the home: every data and delete file the table reads now. */
  files: string[];
  /** Each of those files' size as the catalog records it (a fetched copy must have it). */
  fileSizes: ReadonlyMap<string, number>;
  /** How many commits' files make up the table: 1 after a full write, one more for each merge on top. */
  layers: number;
  rowCount: number;
  /** Bytes of the files it reads. */
  bytes: number;
  columns: ColumnDescription[];
  /** When that snapshot was taken (epoch seconds). */
  created: number;
  source: TableSource;
  /** For a table read as of an earlier snapshot (AT): that snapshot. */
  asOf?: number;
}

export interface LakeTable {
  /** The DuckLake table id. */
  id: number;
  organizationId: string;
  schema: string;
  name: string;
  /** The table's folder relative to the catalog's data path (its DuckLake path). */
  path: string;
  created: number;
  updated: number;
  snapshot: TableVersion;
  /** The table's tags (catalog TableState.tags). */
  tags: Record<string, string>;
}

const seconds = (state: CatalogState, snapshot: number): number =>
  Math.floor((state.snapshotTimes.get(snapshot)?.getTime() ?? 0) / 1000);

/** The columns as DuckDB reads them (an ENUM recorded as its labels reads as the ENUM again). */
export function describeColumns(columns: readonly CatalogColumn[]): ColumnDescription[] {
  return columns.map((c) => ({ name: c.name, type: duckdbTypeOf(c), nullable: c.nullable }));
}

export function lakeTableOf(
  organizationId: string,
  state: CatalogState,
  table: TableState,
  layout: LakeLayout,
): LakeTable {
  const directory = join(layout.tablesDir(organizationId), table.path);
  const relative = (path: string): string => layout.toRelative(join(directory, path));
  return {
    id: table.tableId,
    organizationId,
    schema: table.schema,
    name: table.name,
    path: table.path,
    created: seconds(state, table.beginSnapshot),
    updated: seconds(state, table.changedAt),
    tags: table.tags,
    snapshot: {
      id: table.changedAt,
      files: table.files.flatMap((f) => [relative(f.path), ...(f.deletePath ? [relative(f.deletePath)] : [])]),
      fileSizes: new Map(
        table.files.flatMap((f) => [
          [relative(f.path), f.fileSizeBytes] as const,
          ...(f.deletePath ? [[relative(f.deletePath), f.deleteSizeBytes] as const] : []),
        ]),
      ),
      layers: new Set(table.files.map((f) => f.beginSnapshot)).size,
      rowCount: table.files.reduce((sum, f) => sum + f.recordCount - f.deleteCount, 0),
      bytes: table.files.reduce((sum, f) => sum + f.fileSizeBytes + f.deleteSizeBytes, 0),
      columns: describeColumns(table.columns),
      created: seconds(state, table.changedAt),
      source: {
        columns: table.columns,
        files: table.files,
        mappings: state.mappings,
        directory,
        columnsSince: table.columnsSince,
      },
    },
  };
}

/** The SQL that reads a table version's rows from its files, the specification's way (tableRowsSql). */
export function tableSourceSql(source: TableSource): string {
  return tableRowsSql(
    source.files,
    source.columns,
    (path) => join(source.directory, path),
    source.mappings,
    source.columnsSince,
  );
}

/**
 * The organization's tables as its DuckLake catalog has them now (decision 48): the catalog is the one record of
 * which tables exist, their columns and their files; this only reads it.
 */
export class TableStore {
  constructor(
    private readonly states: CatalogStates,
    private readonly layout: LakeLayout,
  ) {}

  async list(organizationId: string): Promise<LakeTable[]> {
    const state = await this.states.current(organizationId);
    return state.tables.map((t) => lakeTableOf(organizationId, state, t, this.layout));
  }

  async get(organizationId: string, schema: string, name: string): Promise<LakeTable | undefined> {
    const state = await this.states.current(organizationId);
    const table = state.tables.find((t) => t.schema === schema && t.name === name);
    return table && lakeTableOf(organizationId, state, table, this.layout);
  }

  /**
   * Takes a table out of the catalog: a snapshot that drops it. Queries already reading an earlier snapshot finish,
   * and its files go once no kept snapshot reads them. A later commit under the same name makes a new table.
   */
  async retire(organizationId: string, schema: string, name: string): Promise<boolean> {
    const catalog = await this.states.catalog(organizationId);
    const { result } = await catalog.commit({ message: `lake: ${schema}.${name} taken out` }, async (write) => {
      const tableId = await write.liveTableId(schema, name);
      if (tableId === undefined) return false;
      await write.dropTable(tableId);
      return true;
    });
    return result;
  }

  /** The catalog version sessions are built from: the organization's current DuckLake snapshot. */
  async catalogVersion(organizationId: string): Promise<number> {
    return (await this.states.catalog(organizationId)).currentSnapshot();
  }
}
