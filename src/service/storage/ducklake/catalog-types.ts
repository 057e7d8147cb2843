/** What the DuckLake catalog's readers and writers exchange. */

/** A column as a table version has it: its DuckLake column id (the Parquet field id of its data) and type. */
export interface CatalogColumn {
  id: number;
  name: string;
  type: string;
  nullable: boolean;
}

/** A Parquet data file to register, its path relative to its table's path. */
export interface NewDataFile {
  path: string;
  recordCount: number;
  fileSizeBytes: number;
  footerSize: number;
  /**
   * For a file whose columns carry no field ids (written before lake wrote DuckLake), the name mapping that says
   * which column each of its names holds (CatalogWrite.nameMapping).
   */
  mappingId?: number;
  /** Per column id: what readers prune with. */
  columnStats?: readonly {
    columnId: number;
    valueCount: number;
    nullCount: number;
    min: string | null;
    max: string | null;
  }[];
}

/** A data file of a table at a snapshot, with its delete file (positions of its rows no longer in the table). */
export interface TableFileAt {
  dataFileId: number;
  path: string;
  recordCount: number;
  deletePath: string | null;
  /** Columns by name through this name mapping, for a file without field ids; null: by field id. */
  mappingId: number | null;
}
