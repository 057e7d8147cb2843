import { randomUUID } from 'node:crypto';
import type { LockName, MetadataDb } from '../../store/metadata-db.js';
import { changeEntries, isUnqualifiedCreation, qualifiedName, quotedName, unquotedName } from './changes-made.js';
import { CatalogWrite } from './catalog-write.js';
import { readCatalogState, type CatalogState } from './catalog-state.js';
import { columnTree, type CatalogColumn, type ColumnRow, type TableFileAt } from './catalog-types.js';
import { createCatalogStatements } from './ducklake-ddl.js';
import { assignColumnIds, liveColumns } from './column-ids.js';
import { TYPE_TAG, type ColumnShape } from './types.js';

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
    // Every process opens the catalog: one read when it exists already (and one for changes an older build wrote).
    if (await this.exists()) {
      await this.qualifyCreations();
      return this.schemaVersionsPerTable();
    }
    await this.db.transaction(this.lockName, async () => {
      // On PostgreSQL the catalog is a schema of its own (the extension's METADATA_SCHEMA).
      if (this.prefix !== '') await this.db.run(`CREATE SCHEMA IF NOT EXISTS ${this.prefix.slice(0, -1)}`);
      for (const statement of createCatalogStatements(this.prefix)) await this.db.run(statement);
      // Created already (its first snapshot may have expired since; the metadata stays).
      if (await this.db.get(`SELECT 1 AS one FROM ${this.t('ducklake_metadata')} WHERE key = 'version'`)) return;
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
      // The extension gives `main` the path 'main/'; lake keeps every table's folder directly under the data path
      // (a schema adds no folder, CatalogWrite.schema), so a lake schema called main is no different.
      await this.db.run(`INSERT INTO ${this.t('ducklake_schema')} VALUES (0, ?, 0, NULL, 'main', '', TRUE)`, [
        randomUUID(),
      ]);
    });
  }

  /**
   * A catalog an earlier build wrote has one ducklake_schema_versions row per schema change, without a table_id; the
   * extension's 0.4 catalogs have one per table whose schema a snapshot began, and its own upgrade deletes rows
   * without a table. Each such row becomes a row for every table whose columns began at that snapshot (a new table,
   * or one whose columns changed: lake writes a changed table's columns again whole), under the catalog's lock; one
   * cheap look when nothing is left to do.
   */
  private async schemaVersionsPerTable(): Promise<void> {
    const versions = this.t('ducklake_schema_versions');
    const global = async (): Promise<boolean> =>
      (await this.db.get(`SELECT 1 AS found FROM ${versions} WHERE table_id IS NULL LIMIT 1`)) !== undefined;
    if (!(await global())) return;
    await this.db.transaction(this.lockName, async () => {
      if (!(await global())) return;
      await this.db.run(
        `INSERT INTO ${versions} (begin_snapshot, schema_version, table_id)
         SELECT DISTINCT sv.begin_snapshot, sv.schema_version, c.table_id
           FROM ${versions} sv JOIN ${this.t('ducklake_column')} c ON c.begin_snapshot = sv.begin_snapshot
          WHERE sv.table_id IS NULL`,
      );
      await this.db.run(`DELETE FROM ${versions} WHERE table_id IS NULL`);
    });
  }

  /**
   * Names each created table and view in changes_made with its schema, where an earlier build of lake wrote the name
   * alone (`created_table:"orders"`): the extension reads `"schema"."name"` and fails on anything else, so
   * `ducklake_snapshots()` did on every catalog lake had written. The schema is the one of the table or view that
   * snapshot created. Idempotent; under the catalog's lock, so replicas opening it at once rewrite it once.
   */
  private async qualifyCreations(): Promise<void> {
    const unqualified = async (): Promise<{ snapshot_id: number; changes_made: string }[]> =>
      (
        await this.db.all<{ snapshot_id: number; changes_made: string }>(
          `SELECT snapshot_id, changes_made FROM ${this.t('ducklake_snapshot_changes')}
            WHERE changes_made LIKE '%created_table:"%' OR changes_made LIKE '%created_view:"%'`,
        )
      ).filter((row) => changeEntries(row.changes_made).some(isUnqualifiedCreation));
    if ((await unqualified()).length === 0) return;
    await this.db.transaction(this.lockName, async () => {
      for (const row of await unqualified()) {
        const created = await this.db.all<{ kind: string; name: string; schema_name: string }>(
          `SELECT 'created_table' AS kind, t.table_name AS name, s.schema_name FROM ${this.t('ducklake_table')} t
             JOIN ${this.t('ducklake_schema')} s ON s.schema_id = t.schema_id WHERE t.begin_snapshot = ?
           UNION ALL
           SELECT 'created_view' AS kind, v.view_name AS name, s.schema_name FROM ${this.t('ducklake_view')} v
             JOIN ${this.t('ducklake_schema')} s ON s.schema_id = v.schema_id WHERE v.begin_snapshot = ?`,
          [row.snapshot_id, row.snapshot_id],
        );
        const entries = changeEntries(row.changes_made).map((entry) => {
          if (!isUnqualifiedCreation(entry)) return `${entry.type}:${entry.value}`;
          const name = unquotedName(entry.value);
          const made = created.find((c) => c.kind === entry.type && c.name === name);
          return `${entry.type}:${made ? qualifiedName(made.schema_name, name) : entry.value}`;
        });
        await this.db.run(`UPDATE ${this.t('ducklake_snapshot_changes')} SET changes_made = ? WHERE snapshot_id = ?`, [
          entries.join(','),
          row.snapshot_id,
        ]);
      }
    });
  }

  private async exists(): Promise<boolean> {
    try {
      return (
        (await this.db.get(`SELECT 1 AS one FROM ${this.t('ducklake_metadata')} WHERE key = 'version'`)) !== undefined
      );
    } catch {
      // No such table yet: the catalog is still to be created.
      return false;
    }
  }

  /**
   * Runs `work` as one commit: a new snapshot, max+1 under the catalog's lock, so two writers (two replicas on
   * PostgreSQL) get consecutive ids and neither commit is lost. Everything `work` writes begins at that snapshot;
   * a failure rolls all of it back, so the catalog is at the snapshot before or the one after, never between.
   */
  async commit<T>(
    /** `at`: the snapshot's time, when it records something that happened earlier (a conversion); now otherwise. */
    info: { author?: string; message?: string; extra?: string; at?: Date },
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
      // Nothing changed (a table to take out that was not there): no snapshot, as the extension's empty commit.
      if (write.changes.length === 0) return { snapshotId: Number(last.snapshot_id), result };
      const snapshotId = write.snapshotId;
      await this.db.run(`INSERT INTO ${this.t('ducklake_snapshot')} VALUES (?, ?, ?, ?, ?)`, [
        snapshotId,
        (info.at ?? new Date()).toISOString(),
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
      // One row per table whose schema this snapshot began (made, or its columns changed), as the extension writes.
      for (const tableId of write.tablesWithNewSchema)
        await this.db.run(`INSERT INTO ${this.t('ducklake_schema_versions')} VALUES (?, ?, ?)`, [
          snapshotId,
          Number(last.schema_version) + 1,
          tableId,
        ]);
      return { snapshotId, result };
    });
  }

  /** Runs several commits as one transaction: all of them, or (after a crash or an error) none. */
  atomically<T>(work: () => Promise<T>): Promise<T> {
    return this.db.transaction(this.lockName, work);
  }

  /**
   * The column ids `schema.name` would get for these columns if committed now (assignColumnIds): what a writer
   * writes into its files as field ids before the commit, which checks them again (CatalogWrite.table `planned`).
   */
  async planColumns(schema: string, name: string, shapes: readonly ColumnShape[]): Promise<CatalogColumn[]> {
    const table = await this.db.get<{ table_id: number }>(
      `SELECT t.table_id FROM ${this.t('ducklake_table')} t JOIN ${this.t('ducklake_schema')} s ON s.schema_id = t.schema_id
        WHERE s.schema_name = ? AND t.table_name = ? AND t.end_snapshot IS NULL AND s.end_snapshot IS NULL`,
      [schema, name],
    );
    const live = table
      ? await liveColumns(this.db, this.prefix, Number(table.table_id))
      : { current: [], highestEver: 0 };
    return assignColumnIds(live.current, live.highestEver, shapes).columns;
  }

  /** The database and table prefix the catalog lives in: for maintenance (expiry) that works on its tables. */
  get store(): { db: MetadataDb; prefix: string } {
    return { db: this.db, prefix: this.prefix };
  }

  /** Everything the catalog holds at `snapshot` (readCatalogState). */
  stateAt(snapshot: number): Promise<CatalogState> {
    return readCatalogState(this.db, this.prefix, snapshot);
  }

  /**
   * Replaces the value of a live tag of an object in place, without a snapshot: for what lake derives and caches
   * there (a view's columns as DuckDB last bound them), never for what a snapshot decides.
   */
  async refreshTag(objectId: number, key: string, value: string): Promise<void> {
    await this.db.run(
      `UPDATE ${this.t('ducklake_tag')} SET value = ? WHERE object_id = ? AND key = ? AND end_snapshot IS NULL`,
      [value, objectId, key],
    );
  }

  /** Bytes of every data and delete file the catalog still names, at any snapshot it keeps. */
  async storedBytes(): Promise<number> {
    const row = await this.db.get<{ bytes: number | null }>(
      `SELECT (SELECT coalesce(sum(file_size_bytes), 0) FROM ${this.t('ducklake_data_file')})
            + (SELECT coalesce(sum(file_size_bytes), 0) FROM ${this.t('ducklake_delete_file')}) AS bytes`,
    );
    return Number(row?.bytes ?? 0);
  }

  /** Every data and delete file path the catalog names, relative to the data path, with their table's path. */
  async namedFiles(): Promise<Set<string>> {
    const rows = await this.db.all<{ path: string }>(
      `SELECT s.path || tb.path || f.path AS path
         FROM (SELECT table_id, path FROM ${this.t('ducklake_data_file')}
               UNION ALL SELECT table_id, path FROM ${this.t('ducklake_delete_file')}) f
         JOIN (SELECT DISTINCT table_id, schema_id, path FROM ${this.t('ducklake_table')}) tb ON tb.table_id = f.table_id
         JOIN (SELECT DISTINCT schema_id, path FROM ${this.t('ducklake_schema')}) s ON s.schema_id = tb.schema_id
       UNION ALL SELECT path FROM ${this.t('ducklake_files_scheduled_for_deletion')}`,
    );
    return new Set(rows.map((r) => r.path));
  }

  /**
   * The snapshots that changed a table called schema.name (whichever table ids it has had), from their recorded
   * changes: what a table's history needs to look at, instead of every snapshot kept.
   */
  async snapshotsChanging(schema: string, name: string): Promise<number[]> {
    const ids = (
      await this.db.all<{ table_id: number }>(
        `SELECT DISTINCT t.table_id FROM ${this.t('ducklake_table')} t JOIN ${this.t('ducklake_schema')} s ON s.schema_id = t.schema_id
          WHERE lower(s.schema_name) = lower(?) AND lower(t.table_name) = lower(?)`,
        [schema, name],
      )
    ).map((r) => Number(r.table_id));
    if (ids.length === 0) return [];
    const changes = await this.db.all<{ snapshot_id: number; changes_made: string | null }>(
      `SELECT snapshot_id, changes_made FROM ${this.t('ducklake_snapshot_changes')} ORDER BY snapshot_id`,
    );
    const tableIds = new Set(ids.map(String));
    const created = qualifiedName(schema, name).toLowerCase();
    // An older catalog may still name a created table without its schema (put right when it is opened).
    const createdByName = quotedName(name).toLowerCase();
    return changes
      .filter((c) =>
        changeEntries(c.changes_made ?? '').some((e) =>
          e.type === 'created_table'
            ? [created, createdByName].includes(e.value.toLowerCase())
            : e.type.endsWith('_table') && tableIds.has(e.value),
        ),
      )
      .map((c) => Number(c.snapshot_id));
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

  /** The views at a snapshot, with their schema names and SQL. */
  async viewsAt(snapshot: number): Promise<{ viewId: number; schema: string; name: string; sql: string }[]> {
    const rows = await this.db.all<{ view_id: number; schema_name: string; view_name: string; sql: string }>(
      `SELECT v.view_id, s.schema_name, v.view_name, v.sql
         FROM ${this.t('ducklake_view')} v JOIN ${this.t('ducklake_schema')} s ON s.schema_id = v.schema_id
        WHERE ${live('v.')} AND ${live('s.')}
        ORDER BY s.schema_name, v.view_name`,
      [snapshot, snapshot, snapshot, snapshot],
    );
    return rows.map((r) => ({ viewId: Number(r.view_id), schema: r.schema_name, name: r.view_name, sql: r.sql }));
  }

  /**
   * A table's columns at a snapshot, in order: the spec's "Show the Structure of a Table", with the columns inside
   * nested ones (parent_column) as their children.
   */
  async columnsAt(tableId: number, snapshot: number): Promise<CatalogColumn[]> {
    const tags = await this.db.all<{ column_id: number; value: string }>(
      `SELECT column_id, value FROM ${this.t('ducklake_column_tag')} WHERE table_id = ? AND key = ? AND ${live()}`,
      [tableId, TYPE_TAG, snapshot, snapshot],
    );
    return columnTree(
      await this.db.all<ColumnRow>(
        `SELECT column_id, column_name, column_type, nulls_allowed, parent_column, column_order
           FROM ${this.t('ducklake_column')} WHERE table_id = ? AND ${live()}`,
        [tableId, snapshot, snapshot],
      ),
      new Map(tags.map((t) => [Number(t.column_id), t.value])),
    );
  }

  /** A table's data files at a snapshot, each with its delete file: the spec's SELECT, in file order. */
  async filesAt(tableId: number, snapshot: number): Promise<TableFileAt[]> {
    const rows = await this.db.all<{
      data_file_id: number;
      path: string;
      record_count: number;
      delete_path: string | null;
      delete_count: number | null;
      mapping_id: number | null;
    }>(
      `SELECT data.data_file_id, data.path, data.record_count, del.path AS delete_path, del.delete_count, data.mapping_id
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
      deleteCount: Number(r.delete_count ?? 0),
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
