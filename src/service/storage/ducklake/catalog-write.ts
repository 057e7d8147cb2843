import { randomUUID } from 'node:crypto';
import type { MetadataDb, SqlParam } from '../../store/metadata-db.js';
import { shapeKey, type CatalogColumn, type DeleteFileFacts, type NewDataFile } from './catalog-types.js';
import { qualifiedName, quotedName } from './changes-made.js';
import { assignColumnIds, liveColumns } from './column-ids.js';
import { TYPE_TAG, type ColumnShape } from './types.js';

/**
 * What one commit writes. Ids of new schemas, tables and columns come from the snapshot's next_catalog_id (column
 * ids count per table from 1, as the extension's), ids of files from next_file_id.
 */
export class CatalogWrite {
  readonly changes: string[] = [];
  schemaChanged = false;
  /**
   * The tables this commit created or whose columns it changed: each gets a row of ducklake_schema_versions, as the
   * extension writes (per table since its 0.4 catalogs).
   */
  readonly tablesWithNewSchema = new Set<number>();

  /** The names of the schemas this commit looked up or made, by id: a created table or view is named with its own. */
  private readonly schemaNames = new Map<number, string>();

  /** `"schema"."name"`, as the extension writes (and parses) a created table or view in changes_made. */
  private async qualified(schemaId: number, name: string): Promise<string> {
    let schema = this.schemaNames.get(schemaId);
    if (schema === undefined) {
      const row = await this.db.get<{ schema_name: string }>(
        `SELECT schema_name FROM ${this.t('ducklake_schema')} WHERE schema_id = ?`,
        [schemaId],
      );
      schema = String(row?.schema_name);
      this.schemaNames.set(schemaId, schema);
    }
    return qualifiedName(schema, name);
  }

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
    if (found) {
      this.schemaNames.set(Number(found.schema_id), name);
      return Number(found.schema_id);
    }
    const id = this.ids.nextCatalogId++;
    this.schemaNames.set(id, name);
    // Lake keeps a table's files under the data path by table, not by schema: the schema's path adds nothing.
    await this.insert('ducklake_schema', [id, randomUUID(), this.snapshotId, null, name, '', 1]);
    this.note(`created_schema:${quotedName(name)}`);
    this.schemaChanged = true;
    return id;
  }

  /**
   * The table's id and its columns as this snapshot has them: created when new (files under `path`, relative to
   * its schema's), and its columns evolved when they changed. A column whose name, type, nullability and children
   * stay keeps its ids; a new or changed one gets new ids, so data files written before never mix with its values.
   */
  async table(
    schemaId: number,
    name: string,
    path: string,
    columns: readonly ColumnShape[],
    /** The ids a writer planned before writing its files (DuckLakeCatalog.planColumns); the commit fails otherwise. */
    planned?: readonly CatalogColumn[],
  ): Promise<{ tableId: number; columns: CatalogColumn[] }> {
    const found = await this.db.get<{ table_id: number }>(
      `SELECT table_id FROM ${this.t('ducklake_table')} WHERE schema_id = ? AND table_name = ? AND end_snapshot IS NULL`,
      [schemaId, name],
    );
    let tableId: number;
    let live = { current: [] as CatalogColumn[], highestEver: 0 };
    if (found) {
      tableId = Number(found.table_id);
      live = await liveColumns(this.db, this.prefix, tableId);
    } else {
      tableId = this.ids.nextCatalogId++;
      await this.insert('ducklake_table', [tableId, randomUUID(), this.snapshotId, null, schemaId, name, path, 1]);
      await this.insert('ducklake_table_stats', [tableId, 0, 0, 0]);
      this.note(`created_table:${await this.qualified(schemaId, name)}`);
      this.schemaChanged = true;
      this.tablesWithNewSchema.add(tableId);
    }
    const assigned = assignColumnIds(live.current, live.highestEver, columns);
    if (planned && idsKey(planned) !== idsKey(assigned.columns))
      throw new Error(
        `The columns of ${name} changed while its files were being written (their field ids no longer match); write them again.`,
      );
    if (assigned.unchanged) return { tableId, columns: assigned.columns };
    // The columns changed: this version ends, the next begins (columns that stayed as they were keep their ids).
    if (live.current.length > 0) {
      for (const table of ['ducklake_column', 'ducklake_column_tag'])
        await this.db.run(`UPDATE ${this.t(table)} SET end_snapshot = ? WHERE table_id = ? AND end_snapshot IS NULL`, [
          this.snapshotId,
          tableId,
        ]);
      this.note(`altered_table:${tableId}`);
      this.schemaChanged = true;
      this.tablesWithNewSchema.add(tableId);
    }
    const insert = async (column: CatalogColumn, order: number, parent: number | null): Promise<void> => {
      await this.insert('ducklake_column', [
        column.id,
        this.snapshotId,
        null,
        tableId,
        order,
        column.name,
        column.type,
        null,
        null,
        column.nullable ? 1 : 0,
        parent,
        null,
        null,
      ]);
      if (column.lakeType)
        await this.insert('ducklake_column_tag', [
          tableId,
          column.id,
          this.snapshotId,
          null,
          TYPE_TAG,
          column.lakeType,
        ]);
      for (const [index, child] of (column.children ?? []).entries()) await insert(child, index + 1, column.id);
    };
    for (const [order, column] of assigned.columns.entries()) await insert(column, order + 1, null);
    return { tableId, columns: assigned.columns };
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
    const map = async (column: CatalogColumn, parent: number | null, source: string): Promise<void> => {
      await this.insert('ducklake_name_mapping', [id, column.id, source, column.id, parent, 0]);
      for (const child of column.children ?? []) await map(child, column.id, child.name);
    };
    for (const column of columns) await map(column, null, sourceNames.get(column.id) ?? column.name);
    return id;
  }

  /** The id of the table `schema.name` as the catalog has it now, if it has it. */
  async liveTableId(schema: string, name: string): Promise<number | undefined> {
    const row = await this.db.get<{ table_id: number }>(
      `SELECT t.table_id FROM ${this.t('ducklake_table')} t JOIN ${this.t('ducklake_schema')} s ON s.schema_id = t.schema_id
        WHERE s.schema_name = ? AND t.table_name = ? AND t.end_snapshot IS NULL AND s.end_snapshot IS NULL`,
      [schema, name],
    );
    return row ? Number(row.table_id) : undefined;
  }

  /** The id of the view `schema.name` as the catalog has it now, if it has it. */
  async liveViewId(schema: string, name: string): Promise<number | undefined> {
    const row = await this.db.get<{ view_id: number }>(
      `SELECT v.view_id FROM ${this.t('ducklake_view')} v JOIN ${this.t('ducklake_schema')} s ON s.schema_id = v.schema_id
        WHERE s.schema_name = ? AND v.view_name = ? AND v.end_snapshot IS NULL AND s.end_snapshot IS NULL`,
      [schema, name],
    );
    return row ? Number(row.view_id) : undefined;
  }

  /** The path (relative to its schema's) of a live table. */
  async tablePath(tableId: number): Promise<string | undefined> {
    const row = await this.db.get<{ path: string }>(
      `SELECT path FROM ${this.t('ducklake_table')} WHERE table_id = ? AND end_snapshot IS NULL`,
      [tableId],
    );
    return row?.path;
  }

  /**
   * A view (DuckDB's SQL) with its tags, created in this snapshot; an existing one of that name is replaced.
   */
  async view(
    schemaId: number,
    name: string,
    sql: string,
    tags: Readonly<Record<string, string>> = {},
  ): Promise<number> {
    const existing = await this.db.get<{ view_id: number }>(
      `SELECT view_id FROM ${this.t('ducklake_view')} WHERE schema_id = ? AND view_name = ? AND end_snapshot IS NULL`,
      [schemaId, name],
    );
    if (existing) await this.endView(Number(existing.view_id));
    const id = this.ids.nextCatalogId++;
    await this.insert('ducklake_view', [id, randomUUID(), this.snapshotId, null, schemaId, name, 'duckdb', sql, null]);
    for (const [key, value] of Object.entries(tags))
      await this.insert('ducklake_tag', [id, this.snapshotId, null, key, value]);
    this.note(existing ? `altered_view:${id}` : `created_view:${await this.qualified(schemaId, name)}`);
    this.schemaChanged = true;
    return id;
  }

  /** Ends the view (and its tags) at this snapshot. */
  async dropView(viewId: number): Promise<void> {
    await this.endView(viewId);
    this.note(`dropped_view:${viewId}`);
    this.schemaChanged = true;
  }

  private async endView(viewId: number): Promise<void> {
    await this.db.run(
      `UPDATE ${this.t('ducklake_view')} SET end_snapshot = ? WHERE view_id = ? AND end_snapshot IS NULL`,
      [this.snapshotId, viewId],
    );
    await this.db.run(
      `UPDATE ${this.t('ducklake_tag')} SET end_snapshot = ? WHERE object_id = ? AND end_snapshot IS NULL`,
      [this.snapshotId, viewId],
    );
  }

  /**
   * Sets a tag of a table from this snapshot on (the value before stays at earlier snapshots); recorded as the
   * extension records a comment, `altered_table`. Nothing when it already has that value.
   */
  async setTag(tableId: number, key: string, value: string): Promise<void> {
    const current = await this.db.get<{ value: string }>(
      `SELECT value FROM ${this.t('ducklake_tag')} WHERE object_id = ? AND key = ? AND end_snapshot IS NULL`,
      [tableId, key],
    );
    if (current?.value === value) return;
    await this.db.run(
      `UPDATE ${this.t('ducklake_tag')} SET end_snapshot = ? WHERE object_id = ? AND key = ? AND end_snapshot IS NULL`,
      [this.snapshotId, tableId, key],
    );
    await this.insert('ducklake_tag', [tableId, this.snapshotId, null, key, value]);
    this.note(`altered_table:${tableId}`);
  }

  /** Ends the table (and its files) at this snapshot: it is no longer in the catalog from here on. */
  async dropTable(tableId: number): Promise<void> {
    await this.db.run(
      `UPDATE ${this.t('ducklake_tag')} SET end_snapshot = ? WHERE object_id = ? AND end_snapshot IS NULL`,
      [this.snapshotId, tableId],
    );
    for (const table of [
      'ducklake_table',
      'ducklake_column',
      'ducklake_column_tag',
      'ducklake_data_file',
      'ducklake_delete_file',
    ])
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
  async setDeletes(tableId: number, dataFileId: number, file: DeleteFileFacts, newlyDeleted: number): Promise<void> {
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

/** Columns' ids and shapes, in order, as one comparable text (whatever order their properties were set in). */
function idsKey(columns: readonly CatalogColumn[]): string {
  return JSON.stringify(columns.map((c): unknown => [c.id, shapeKey(c), idsKey(c.children ?? [])]));
}
