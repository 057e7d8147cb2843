import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UNRESTRICTED, type TableAccess } from '../auth/permissions.js';
import type { DuckDBConnection } from '@duckdb/node-api';
import { openPrivilegedConnection, quoteIdentifier, quoteLiteral } from '../engine/duckdb.js';
import { inspectStatement } from '../engine/inspect.js';
import { prepareSelect } from '../engine/query-runner.js';
import { guardSql } from '../engine/sql-guard.js';
import { LakeServiceError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { MetadataDb } from '../store/metadata-db.js';
import { ensureCatalogFile, type CatalogContents } from './catalog-file.js';
import { DEMO_TABLES } from './demo.js';
import type { LakeLayout } from './layout.js';
import { checkObjectName } from './names.js';
import { layersOf, snapshotSource } from './snapshot-sql.js';
import { SettingsStore } from '../home/settings-store.js';
import { TableStore, type ColumnDescription, type LakeTable } from './tables.js';
import { ViewStore, type LakeView, type ObjectName } from './views.js';

const DEMO_SEEDED_KEY = 'demo_seeded';

export interface WriteTableOptions {
  /** Columns known never to hold NULL (from a source's schema), or 'all'; the others are reported nullable. */
  notNull?: ReadonlySet<string> | 'all';
  /** Caps DuckDB's memory while writing (syncs of large tables); DuckDB's own default is 80% of RAM. */
  memoryLimit?: string;
  /**
   * Write the parts as a new layer on top of this table's current snapshot, replacing its rows by `key` (an
   * incremental sync's changed rows), instead of a whole new table: the cost follows the change, not the table.
   */
  layerOn?: { previous: LakeTable; key: string[] };
  /** Column types the snapshot records instead of what Parquet holds (an ENUM Parquet keeps as its labels). */
  columnTypes?: Record<string, string>;
}

/** Layers a snapshot may have before an incremental sync rewrites it whole (compaction): reads stay cheap. */
export const MAX_LAYERS = 8;

/** Lake table storage: writes tables as immutable Parquet snapshots and publishes them with an atomic commit. */
export class Lake {
  readonly tables: TableStore;
  readonly views: ViewStore;
  private readonly settings: SettingsStore;

  constructor(
    private readonly db: MetadataDb,
    readonly layout: LakeLayout,
  ) {
    this.tables = new TableStore(db);
    this.views = new ViewStore(db);
    this.settings = new SettingsStore(db);
  }

  /**
   * Writes the result of lake-internal SQL as a new snapshot of schema.name (zstd Parquet), then commits it. Until
   * the commit, readers keep seeing the previous snapshot; a crash before it leaves only an unreferenced folder.
   */
  async writeTable(
    organizationId: string,
    schema: string,
    name: string,
    selectSql: string,
    options: WriteTableOptions = {},
  ): Promise<LakeTable> {
    return this.writeSnapshot(
      organizationId,
      schema,
      name,
      async (connection, part) =>
        Number(
          (await connection.run(`COPY (${selectSql}\n) TO ${quoteLiteral(part(0))} (FORMAT parquet, COMPRESSION zstd)`))
            .rowsChanged,
        ),
      options,
    );
  }

  /**
   * Writes a new snapshot of schema.name with `write`, which fills one or more Parquet parts (`part(i)` names part
   * i) through a private DuckDB connection and returns the row count; then commits it. Until the commit, readers
   * see the previous snapshot; a crash before it leaves only an unreferenced folder, and the previous data intact.
   */
  async writeSnapshot(
    organizationId: string,
    schema: string,
    name: string,
    write: (connection: DuckDBConnection, part: (index: number) => string) => Promise<number>,
    options: WriteTableOptions = {},
  ): Promise<LakeTable> {
    const tableId = await this.tables.ensureTableId(organizationId, schema, name);
    const snapshotId = newId('snap');
    const dir = this.layout.snapshotDir(organizationId, tableId, snapshotId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const part = (index: number): string => join(dir, `part-${index}.parquet`);
    const { connection, close } = await openPrivilegedConnection({
      memoryLimit: options.memoryLimit,
      tempDirectory: join(this.layout.homeRoot, 'tmp', 'duckdb'),
    });
    try {
      // Row order within a snapshot carries no meaning; not keeping it lets DuckDB stream the write in less memory.
      if (options.memoryLimit) await connection.run('SET preserve_insertion_order = false');
      const rowCount = await write(connection, part);
      const files = readdirSync(dir)
        .filter((f) => /^part-\d+\.parquet$/.test(f))
        .sort((a, b) => Number(a.slice(5, -8)) - Number(b.slice(5, -8)))
        .map((f) => join(dir, f));
      const described = await connection.runAndReadAll(
        `DESCRIBE SELECT * FROM read_parquet(${quoteLiteral(files[0] as string)})`,
      );
      const columns: ColumnDescription[] = described.getRowObjectsJS().map((row) => ({
        name: String(row.column_name),
        type: options.columnTypes?.[String(row.column_name)] ?? String(row.column_type),
        nullable: options.notNull !== 'all' && !options.notNull?.has(String(row.column_name)),
      }));
      const written = files.map((f) => this.layout.toRelative(f));
      const layered = options.layerOn ? await this.layer(connection, options.layerOn, written, rowCount) : undefined;
      const allFiles = layered ? layered.files : written;
      await this.tables.commit(organizationId, tableId, {
        id: snapshotId,
        directory: this.layout.toRelative(dir),
        files: allFiles,
        ...(layered ? { layers: layered.layers, mergeKey: options.layerOn?.key } : {}),
        rowCount: layered ? layered.rowCount : rowCount,
        bytes: allFiles.reduce((sum, f) => sum + statSync(this.layout.toAbsolute(f)).size, 0),
        columns,
      });
    } finally {
      close();
    }
    return (await this.tables.get(organizationId, schema, name)) as LakeTable;
  }

  /**
   * The snapshot that puts `written` (rowCount changed rows) on top of the previous one: its files and layers,
   * and its row count (the previous rows, plus the new, less those the new replace by key).
   */
  private async layer(
    connection: DuckDBConnection,
    on: NonNullable<WriteTableOptions['layerOn']>,
    written: string[],
    rowCount: number,
  ): Promise<{ files: string[]; layers: string[][]; rowCount: number }> {
    const previous = on.previous.snapshot;
    // Nothing changed: the previous layers stand (the empty part written is left for collection).
    if (rowCount === 0) return { files: previous.files, layers: layersOf(previous), rowCount: previous.rowCount };
    const toAbsolute = (f: string): string => this.layout.toAbsolute(f);
    const keys = on.key.map((k) => quoteIdentifier(k)).join(', ');
    const fresh = `read_parquet([${written.map((f) => quoteLiteral(toAbsolute(f))).join(', ')}])`;
    // Reads only the key columns of the previous snapshot.
    const replaced = await connection.runAndReadAll(
      `SELECT count(*) AS n FROM (SELECT ${keys} FROM ${fresh}) n SEMI JOIN (SELECT ${keys} FROM (${snapshotSource(previous, toAbsolute)})) o USING (${keys})`,
    );
    return {
      files: [...previous.files, ...written],
      layers: [...layersOf(previous), written],
      rowCount: previous.rowCount + rowCount - Number(replaced.getRowObjectsJS()[0]?.n ?? 0),
    };
  }

  /** Bytes of every file the organization's snapshots read, current and kept: what its lake holds on disk. */
  async storedBytes(organizationId: string): Promise<number> {
    let bytes = 0;
    for (const file of await this.tables.storedFiles(organizationId)) {
      try {
        bytes += statSync(this.layout.toAbsolute(file)).size;
      } catch {
        // A file whose collection is under way holds nothing any more.
      }
    }
    return bytes;
  }

  /**
   * What an access may see, read in one transaction so it is one moment's catalog: its tables, and the views it
   * may read whose every table and view it may read too (a view never opens a way around a grant).
   */
  async visible(
    organizationId: string,
    access: TableAccess = UNRESTRICTED,
  ): Promise<CatalogContents & { version: number }> {
    return this.db.snapshot(async () => {
      const version = await this.tables.catalogVersion(organizationId);
      const tables = await this.tables.list(organizationId);
      const views = await this.views.list(organizationId);
      if (!access.restricted) return { version, tables, views };
      const visibleTables = tables.filter((t) => access.canRead(t.schema, t.name));
      const byName = new Map(views.map((v) => [key(v), v]));
      const tableNames = new Set(visibleTables.map(key));
      const verdicts = new Map<string, boolean>();
      const viewVisible = (view: LakeView, path: Set<string>): boolean => {
        const k = key(view);
        const known = verdicts.get(k);
        if (known !== undefined) return known;
        if (path.has(k) || !access.canRead(view.schema, view.name)) return false;
        path.add(k);
        const ok = view.references.every((ref) => {
          const inner = byName.get(key(ref));
          return inner ? viewVisible(inner, path) : tableNames.has(key(ref));
        });
        path.delete(k);
        verdicts.set(k, ok);
        return ok;
      };
      return { version, tables: visibleTables, views: views.filter((v) => viewVisible(v, new Set())) };
    });
  }

  /**
   * The catalog file a session attaches: the organization's current version, cut down to what the access may see
   * when it is restricted (so even the engine cannot name a hidden table). Built on first use.
   */
  async catalogFile(
    organizationId: string,
    access: TableAccess = UNRESTRICTED,
  ): Promise<{ file: string; tables: LakeTable[]; version: number }> {
    await this.ensureDemo(organizationId);
    const { version, tables, views } = await this.visible(organizationId, access);
    const fileName = access.restricted
      ? `v${version}-r${createHash('sha256')
          .update([...tables.map(key), '|', ...views.map(key)].join('\n'))
          .digest('hex')
          .slice(0, 16)}`
      : `v${version}`;
    const file = await ensureCatalogFile(
      this.layout,
      organizationId,
      fileName,
      { tables, views },
      async (view, columns) => {
        if (JSON.stringify(columns) !== JSON.stringify(view.columns)) await this.views.updateColumns(view.id, columns);
      },
    );
    return { file, tables: [...tables], version };
  }

  /**
   * Creates a logical view after the same checks as a query: one read-only SELECT, no file or storage access, and
   * only lake tables and views named (schema-qualified). Its columns come from DuckDB binding it.
   */
  async createView(organizationId: string, schema: string, name: string, sql: string): Promise<LakeView> {
    checkObjectName(schema, 'schema');
    checkObjectName(name, 'name');
    if ((await this.tables.get(organizationId, schema, name)) || (await this.views.get(organizationId, schema, name))) {
      throw new LakeServiceError('parameter_invalid', `${schema}.${name} already exists.`, { param: 'name' });
    }
    const { statement } = guardSql(sql);
    const { file } = await this.catalogFile(organizationId);
    const { connection, close } = await openPrivilegedConnection();
    try {
      await connection.run(`ATTACH ${quoteLiteral(file)} AS lake (READ_ONLY); USE lake`);
      const { prepared, references } = await (async () => {
        const references = await inspectStatement(connection, statement);
        return { references, prepared: await prepareSelect(connection, statement) };
      })().catch((error: unknown) => {
        if (error instanceof LakeServiceError) throw error;
        throw new LakeServiceError(
          'parameter_invalid',
          `The view's SQL does not run: ${error instanceof Error ? error.message : String(error)}`,
          { param: 'sql' },
        );
      });
      const named: ObjectName[] = references.map((ref) => {
        if ((ref.catalog !== '' && ref.catalog.toLowerCase() !== 'lake') || ref.schema === '') {
          throw new LakeServiceError(
            'parameter_invalid',
            `A view names lake tables as <schema>.<table> or lake.<schema>.<table>; '${ref.table}' is not one.`,
            { param: 'sql' },
          );
        }
        return { schema: ref.schema, name: ref.table };
      });
      const columns: ColumnDescription[] = prepared.columns.map((column) => ({ ...column, nullable: true }));
      return this.views.insert(organizationId, schema, name, statement.trim(), named, columns);
    } finally {
      close();
    }
  }

  /**
   * Seeds lake.demo once per organization. Two processes seeding at once both write and commit identical
   * snapshots; the later commit wins and nothing is lost.
   */
  async ensureDemo(organizationId: string): Promise<void> {
    const key = `${DEMO_SEEDED_KEY}:${organizationId}`;
    if ((await this.settings.get(key)) !== undefined) return;
    for (const table of DEMO_TABLES) {
      if (!(await this.tables.get(organizationId, 'demo', table.name))) {
        // lake generates every demo value, so every column is known to be complete.
        await this.writeTable(organizationId, 'demo', table.name, table.sql, { notNull: 'all' });
      }
    }
    await this.settings.setIfAbsent(key, String(Math.floor(Date.now() / 1000)));
  }
}

const key = (object: { schema: string; name: string }): string =>
  `${object.schema.toLowerCase()}\u0000${object.name.toLowerCase()}`;
