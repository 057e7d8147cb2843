import { randomUUID } from 'node:crypto';
import type { LockName, MetadataDb, SqlParam } from '../../store/metadata-db.js';
import { createCatalogStatements } from './ducklake-ddl.js';

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

const live = (alias = ''): string =>
  `${alias}begin_snapshot <= ? AND (${alias}end_snapshot IS NULL OR ${alias}end_snapshot > ?)`;

/**
 * One organization's DuckLake 1.0 catalog in a metadata store: a SQLite file of its own, or a schema of the shared
 * PostgreSQL database (`prefix` is that schema and a dot). Lake is its only writer: each commit is one transaction
 * under the catalog's lock that adds snapshot max+1 with everything it changed; readers use the spec's queries
 * ("Queries" in the DuckLake specification), at any snapshot still in the catalog.
 */
export class DuckLakeCatalog {
  constructor(
    private readonly db: MetadataDb,
    private readonly prefix: string,
    private readonly lockName: LockName,
  ) {}

  private t(name: string): string {
    return `${this.prefix}${name}`;
  }

  /**
   * Creates the catalog when it does not exist yet: its tables, snapshot 0 (which creates schema `main`, as the
   * extension's does), and the metadata naming the format version and where the data lives. Idempotent.
   */
  async initialize(dataPath: string, createdBy: string): Promise<void> {
    await this.db.transaction(this.lockName, async () => {
      // On PostgreSQL the catalog is a schema of its own (the extension's METADATA_SCHEMA).
      if (this.prefix !== '') await this.db.run(`CREATE SCHEMA IF NOT EXISTS ${this.prefix.slice(0, -1)}`);
      for (const statement of createCatalogStatements(this.prefix)) await this.db.run(statement);
      if (await this.db.get(`SELECT 1 AS one FROM ${this.t('ducklake_snapshot')} WHERE snapshot_id = 0`)) return;
      const now = new Date().toISOString();
      await this.db.run(`INSERT INTO ${this.t('ducklake_snapshot')} VALUES (0, ?, 0, 1, 0)`, [now]);
      await this.db.run(`INSERT INTO ${this.t('ducklake_snapshot_changes')} VALUES (0, ?, NULL, NULL, NULL)`, [
        'created_schema:"main"',
      ]);
      const metadata: [string, string][] = [
        ['version', '1.0'],
        ['created_by', createdBy],
        ['data_path', dataPath.endsWith('/') ? dataPath : `${dataPath}/`],
        ['encrypted', 'false'],
      ];
      for (const [key, value] of metadata)
        await this.db.run(`INSERT INTO ${this.t('ducklake_metadata')} (key, value) VALUES (?, ?)`, [key, value]);
      await this.db.run(`INSERT INTO ${this.t('ducklake_schema')} VALUES (0, ?, 0, NULL, 'main', 'main/', TRUE)`, [
        randomUUID(),
      ]);
    });
  }

  /**
   * Runs `work` as one commit: a new snapshot, max+1 under the catalog's lock, so two writers (two replicas on
   * PostgreSQL) get consecutive ids and neither commit is lost. Everything `work` writes begins at that snapshot;
   * a failure rolls all of it back, so the catalog is at the snapshot before or the one after, never between.
   */
  async commit<T>(
    info: { author?: string; message?: string; extra?: string },
    work: (write: CatalogWrite) => Promise<T>,
  ): Promise<{ snapshotId: number; result: T }> {
    return this.db.transaction(this.lockName, async () => {
      const last = await this.db.get<{
        snapshot_id: number;
        schema_version: number;
        next_catalog_id: number;
        next_file_id: number;
      }>(
        `SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM ${this.t('ducklake_snapshot')} ORDER BY snapshot_id DESC LIMIT 1`,
      );
      if (!last) throw new Error('The DuckLake catalog has no snapshot; it was not initialized.');
      const write = new CatalogWrite(this.db, this.prefix, Number(last.snapshot_id) + 1, {
        nextCatalogId: Number(last.next_catalog_id),
        nextFileId: Number(last.next_file_id),
      });
      const result = await work(write);
      const snapshotId = write.snapshotId;
      await this.db.run(`INSERT INTO ${this.t('ducklake_snapshot')} VALUES (?, ?, ?, ?, ?)`, [
        snapshotId,
        new Date().toISOString(),
        Number(last.schema_version) + (write.schemaChanged ? 1 : 0),
        write.ids.nextCatalogId,
        write.ids.nextFileId,
      ]);
      await this.db.run(`INSERT INTO ${this.t('ducklake_snapshot_changes')} VALUES (?, ?, ?, ?, ?)`, [
        snapshotId,
        write.changes.join(','),
        info.author ?? null,
        info.message ?? null,
        info.extra ?? null,
      ]);
      if (write.schemaChanged)
        await this.db.run(`INSERT INTO ${this.t('ducklake_schema_versions')} VALUES (?, ?, NULL)`, [
          snapshotId,
          Number(last.schema_version) + 1,
        ]);
      return { snapshotId, result };
    });
  }

  /** The newest snapshot: the spec's `SELECT max(snapshot_id) FROM ducklake_snapshot`. */
  async currentSnapshot(): Promise<number> {
    const row = await this.db.get<{ id: number | null }>(
      `SELECT max(snapshot_id) AS id FROM ${this.t('ducklake_snapshot')}`,
    );
    return Number(row?.id ?? 0);
  }

  async metadata(key: string): Promise<string | undefined> {
    const row = await this.db.get<{ value: string }>(
      `SELECT value FROM ${this.t('ducklake_metadata')} WHERE key = ? AND scope IS NULL`,
      [key],
    );
    return row?.value;
  }

  /** The tables at a snapshot, with their schema names and paths (relative to the data path). */
  async tablesAt(snapshot: number): Promise<{ tableId: number; schema: string; name: string; path: string }[]> {
    const rows = await this.db.all<{
      table_id: number;
      schema_name: string;
      table_name: string;
      schema_path: string;
      table_path: string;
    }>(
      `SELECT t.table_id, s.schema_name, t.table_name, s.path AS schema_path, t.path AS table_path
         FROM ${this.t('ducklake_table')} t JOIN ${this.t('ducklake_schema')} s ON s.schema_id = t.schema_id
        WHERE ${live('t.')} AND ${live('s.')}
        ORDER BY s.schema_name, t.table_name`,
      [snapshot, snapshot, snapshot, snapshot],
    );
    return rows.map((r) => ({
      tableId: Number(r.table_id),
      schema: r.schema_name,
      name: r.table_name,
      path: `${r.schema_path}${r.table_path}`,
    }));
  }

  /** A table's top-level columns at a snapshot, in order: the spec's "Show the Structure of a Table". */
  async columnsAt(tableId: number, snapshot: number): Promise<CatalogColumn[]> {
    const rows = await this.db.all<{
      column_id: number;
      column_name: string;
      column_type: string;
      nulls_allowed: unknown;
    }>(
      `SELECT column_id, column_name, column_type, nulls_allowed FROM ${this.t('ducklake_column')}
        WHERE table_id = ? AND parent_column IS NULL AND ${live()} ORDER BY column_order`,
      [tableId, snapshot, snapshot],
    );
    return rows.map((r) => ({
      id: Number(r.column_id),
      name: r.column_name,
      type: r.column_type,
      nullable: r.nulls_allowed === true || Number(r.nulls_allowed) === 1,
    }));
  }

  /** A table's data files at a snapshot, each with its delete file: the spec's SELECT, in file order. */
  async filesAt(tableId: number, snapshot: number): Promise<TableFileAt[]> {
    const rows = await this.db.all<{
      data_file_id: number;
      path: string;
      record_count: number;
      delete_path: string | null;
      mapping_id: number | null;
    }>(
      `SELECT data.data_file_id, data.path, data.record_count, del.path AS delete_path, data.mapping_id
         FROM ${this.t('ducklake_data_file')} data
         LEFT JOIN (SELECT * FROM ${this.t('ducklake_delete_file')} WHERE ${live()}) del ON del.data_file_id = data.data_file_id
        WHERE data.table_id = ? AND ${live('data.')}
        ORDER BY data.file_order`,
      [snapshot, snapshot, tableId, snapshot, snapshot],
    );
    return rows.map((r) => ({
      dataFileId: Number(r.data_file_id),
      path: r.path,
      recordCount: Number(r.record_count),
      deletePath: r.delete_path,
      mappingId: r.mapping_id === null ? null : Number(r.mapping_id),
    }));
  }

  /** Each name mapping's source name per column id: how files without field ids are read. */
  async nameMappings(mappingIds: readonly number[]): Promise<Map<number, Map<number, string>>> {
    const mappings = new Map<number, Map<number, string>>();
    for (const id of new Set(mappingIds)) {
      const rows = await this.db.all<{ column_id: number; source_name: string }>(
        `SELECT column_id, source_name FROM ${this.t('ducklake_name_mapping')} WHERE mapping_id = ? AND parent_column IS NULL`,
        [id],
      );
      mappings.set(id, new Map(rows.map((r) => [Number(r.column_id), r.source_name])));
    }
    return mappings;
  }
}

/**
 * What one commit writes. Ids of new schemas, tables and columns come from the snapshot's next_catalog_id (column
 * ids count per table from 1, as the extension's), ids of files from next_file_id.
 */
export class CatalogWrite {
  readonly changes: string[] = [];
  schemaChanged = false;

  /** Records a change once in the snapshot's changes_made. */
  private note(change: string): void {
    if (!this.changes.includes(change)) this.changes.push(change);
  }

  constructor(
    private readonly db: MetadataDb,
    private readonly prefix: string,
    readonly snapshotId: number,
    readonly ids: { nextCatalogId: number; nextFileId: number },
  ) {}

  private t(name: string): string {
    return `${this.prefix}${name}`;
  }

  private async insert(table: string, values: readonly SqlParam[]): Promise<void> {
    await this.db.run(`INSERT INTO ${this.t(table)} VALUES (${values.map(() => '?').join(', ')})`, values);
  }

  /** The schema's id, created in this snapshot when it does not exist. */
  async schema(name: string): Promise<number> {
    const found = await this.db.get<{ schema_id: number }>(
      `SELECT schema_id FROM ${this.t('ducklake_schema')} WHERE schema_name = ? AND end_snapshot IS NULL`,
      [name],
    );
    if (found) return Number(found.schema_id);
    const id = this.ids.nextCatalogId++;
    // Lake keeps a table's files under the data path by table, not by schema: the schema's path adds nothing.
    await this.insert('ducklake_schema', [id, randomUUID(), this.snapshotId, null, name, '', 1]);
    this.note(`created_schema:${quoted(name)}`);
    this.schemaChanged = true;
    return id;
  }

  /**
   * The table's id and its columns as this snapshot has them: created when new (files under `path`, relative to
   * its schema's), and its columns evolved when they changed. A column that keeps its name and type keeps its id;
   * a new or retyped one gets a new id, so data files written before never mix with its values.
   */
  async table(
    schemaId: number,
    name: string,
    path: string,
    columns: readonly { name: string; type: string; nullable: boolean }[],
  ): Promise<{ tableId: number; columns: CatalogColumn[] }> {
    const found = await this.db.get<{ table_id: number }>(
      `SELECT table_id FROM ${this.t('ducklake_table')} WHERE schema_id = ? AND table_name = ? AND end_snapshot IS NULL`,
      [schemaId, name],
    );
    let tableId: number;
    let current: { column_id: number; column_name: string; column_type: string; nulls_allowed: unknown }[] = [];
    if (found) {
      tableId = Number(found.table_id);
      current = await this.db.all(
        `SELECT column_id, column_name, column_type, nulls_allowed FROM ${this.t('ducklake_column')}
          WHERE table_id = ? AND end_snapshot IS NULL AND parent_column IS NULL ORDER BY column_order`,
        [tableId],
      );
    } else {
      tableId = this.ids.nextCatalogId++;
      await this.insert('ducklake_table', [tableId, randomUUID(), this.snapshotId, null, schemaId, name, path, 1]);
      await this.insert('ducklake_table_stats', [tableId, 0, 0, 0]);
      this.note(`created_table:${quoted(name)}`);
      this.schemaChanged = true;
    }
    const same = (a: (typeof current)[number], b: (typeof columns)[number]): boolean =>
      a.column_name === b.name && a.column_type === b.type && Boolean(Number(a.nulls_allowed)) === b.nullable;
    const unchanged =
      current.length === columns.length && current.every((c, i) => same(c, columns[i] as (typeof columns)[number]));
    if (unchanged)
      return {
        tableId,
        columns: current.map((c) => ({
          id: Number(c.column_id),
          name: c.column_name,
          type: c.column_type,
          nullable: Boolean(Number(c.nulls_allowed)),
        })),
      };
    // The columns changed: this version ends, the next begins; ids of columns that stayed as they were are kept.
    const maxEver = await this.db.get<{ id: number | null }>(
      `SELECT max(column_id) AS id FROM ${this.t('ducklake_column')} WHERE table_id = ?`,
      [tableId],
    );
    let nextId = Number(maxEver?.id ?? 0) + 1;
    if (current.length > 0) {
      await this.db.run(
        `UPDATE ${this.t('ducklake_column')} SET end_snapshot = ? WHERE table_id = ? AND end_snapshot IS NULL`,
        [this.snapshotId, tableId],
      );
      this.note(`altered_table:${tableId}`);
      this.schemaChanged = true;
    }
    const result: CatalogColumn[] = [];
    for (const [order, column] of columns.entries()) {
      const kept = current.find((c) => same(c, column));
      const id = kept ? Number(kept.column_id) : nextId++;
      await this.insert('ducklake_column', [
        id,
        this.snapshotId,
        null,
        tableId,
        order + 1,
        column.name,
        column.type,
        null,
        null,
        column.nullable ? 1 : 0,
        null,
        null,
        null,
      ]);
      result.push({ id, name: column.name, type: column.type, nullable: column.nullable });
    }
    return { tableId, columns: result };
  }

  /**
   * A name mapping (`map_by_name`, as the extension's) for files whose columns carry no field ids: each column of
   * the table is found in such a file by `sourceNames` (its name there, by default its name now).
   */
  async nameMapping(
    tableId: number,
    columns: readonly CatalogColumn[],
    sourceNames: ReadonlyMap<number, string> = new Map(),
  ): Promise<number> {
    const id = this.ids.nextCatalogId++;
    await this.insert('ducklake_column_mapping', [id, tableId, 'map_by_name']);
    for (const column of columns)
      await this.insert('ducklake_name_mapping', [
        id,
        column.id,
        sourceNames.get(column.id) ?? column.name,
        column.id,
        null,
        0,
      ]);
    return id;
  }

  /** Ends the table (and its files) at this snapshot: it is no longer in the catalog from here on. */
  async dropTable(tableId: number): Promise<void> {
    for (const table of ['ducklake_table', 'ducklake_column', 'ducklake_data_file', 'ducklake_delete_file'])
      await this.db.run(`UPDATE ${this.t(table)} SET end_snapshot = ? WHERE table_id = ? AND end_snapshot IS NULL`, [
        this.snapshotId,
        tableId,
      ]);
    this.note(`dropped_table:${tableId}`);
    this.schemaChanged = true;
  }

  /**
   * The table's rows become exactly these files (a full sync's commit, a compaction): the files it had end at this
   * snapshot, with their delete files, and stay readable at earlier snapshots until they expire.
   */
  async replaceFiles(tableId: number, files: readonly NewDataFile[]): Promise<number[]> {
    for (const table of ['ducklake_data_file', 'ducklake_delete_file'])
      await this.db.run(`UPDATE ${this.t(table)} SET end_snapshot = ? WHERE table_id = ? AND end_snapshot IS NULL`, [
        this.snapshotId,
        tableId,
      ]);
    await this.db.run(
      `UPDATE ${this.t('ducklake_table_stats')} SET record_count = 0, file_size_bytes = 0 WHERE table_id = ?`,
      [tableId],
    );
    return this.addFiles(tableId, files);
  }

  /** Adds data files to the table; their rows get row ids from the table's next_row_id on. */
  async addFiles(tableId: number, files: readonly NewDataFile[]): Promise<number[]> {
    const stats = await this.db.get<{ next_row_id: number; record_count: number; file_size_bytes: number }>(
      `SELECT next_row_id, record_count, file_size_bytes FROM ${this.t('ducklake_table_stats')} WHERE table_id = ?`,
      [tableId],
    );
    let rowId = Number(stats?.next_row_id ?? 0);
    let records = Number(stats?.record_count ?? 0);
    let bytes = Number(stats?.file_size_bytes ?? 0);
    const order = await this.db.get<{ n: number | null }>(
      `SELECT max(file_order) AS n FROM ${this.t('ducklake_data_file')} WHERE table_id = ?`,
      [tableId],
    );
    let fileOrder = Number(order?.n ?? -1) + 1;
    const ids: number[] = [];
    for (const file of files) {
      const id = this.ids.nextFileId++;
      ids.push(id);
      await this.insert('ducklake_data_file', [
        id,
        tableId,
        this.snapshotId,
        null,
        fileOrder++,
        file.path,
        1,
        'parquet',
        file.recordCount,
        file.fileSizeBytes,
        file.footerSize,
        rowId,
        null,
        null,
        file.mappingId ?? null,
        null,
      ]);
      for (const stat of file.columnStats ?? [])
        await this.insert('ducklake_file_column_stats', [
          id,
          tableId,
          stat.columnId,
          null,
          stat.valueCount,
          stat.nullCount,
          stat.min,
          stat.max,
          null,
          null,
        ]);
      rowId += file.recordCount;
      records += file.recordCount;
      bytes += file.fileSizeBytes;
    }
    await this.db.run(
      `UPDATE ${this.t('ducklake_table_stats')} SET record_count = ?, next_row_id = ?, file_size_bytes = ? WHERE table_id = ?`,
      [records, rowId, bytes, tableId],
    );
    if (files.length > 0) this.note(`inserted_into_table:${tableId}`);
    return ids;
  }

  /**
   * Marks rows of a data file deleted from this snapshot on: a positional delete file (`file_path`, `pos`) holding
   * every position deleted so far, which replaces the file's earlier delete file (at most one per file and snapshot).
   */
  async setDeletes(
    tableId: number,
    dataFileId: number,
    file: { path: string; deleteCount: number; fileSizeBytes: number; footerSize: number },
    newlyDeleted: number,
  ): Promise<void> {
    await this.db.run(
      `UPDATE ${this.t('ducklake_delete_file')} SET end_snapshot = ? WHERE data_file_id = ? AND end_snapshot IS NULL`,
      [this.snapshotId, dataFileId],
    );
    await this.insert('ducklake_delete_file', [
      this.ids.nextFileId++,
      tableId,
      this.snapshotId,
      null,
      dataFileId,
      file.path,
      1,
      'parquet',
      file.deleteCount,
      file.fileSizeBytes,
      file.footerSize,
      null,
      null,
    ]);
    await this.db.run(
      `UPDATE ${this.t('ducklake_table_stats')} SET record_count = record_count - ? WHERE table_id = ?`,
      [newlyDeleted, tableId],
    );
    this.note(`deleted_from_table:${tableId}`);
  }
}

/** A name in changes_made: double-quoted, with a double quote doubled. */
function quoted(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
