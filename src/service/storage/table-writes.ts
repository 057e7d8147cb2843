import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  openAhead,
  openPrivilegedConnection,
  quoteLiteral,
  type PrivilegedConnection,
  type PrivilegedOptions,
} from '../engine/duckdb.js';
import { mark } from '../../support/debug-timing.js';
import type { Release } from '../files/lake-files.js';
import { newId } from '../core/ids.js';
import type { CatalogStates } from './catalog-states.js';
import type { CatalogColumn, NewDataFile } from './ducklake/catalog-types.js';
import { describeDataFile, fieldIdsOption, storedRowsSql } from './ducklake/data-files.js';
import { mergeChangedRows, type MergeCounts } from './ducklake/merge.js';
import { columnShape, type ColumnShape } from './ducklake/types.js';
import type { LakeLayout } from './layout.js';
import type { LakeTable } from './tables.js';

export interface WriteTableOptions {
  /** Columns known never to hold NULL (from a source's schema), or 'all'; the others are reported nullable. */
  notNull?: ReadonlySet<string> | 'all';
  /** Caps DuckDB's memory while writing (syncs of large tables); DuckDB's own default is 80% of RAM. */
  memoryLimit?: string;
  /**
   * Merge the parts into the table instead of replacing its rows: each part row replaces the table's row with the
   * same `key` (an incremental sync's changed rows). The cost follows the change, not the table.
   */
  mergeOn?: {
    key: string[];
    /** Delete detection: SQL of every key the source has now, read once the parts are written (MergeInput). */
    presentKeys?: () => string;
    /** Change data capture: SQL of the keys the source deleted, read once the parts are written (MergeInput). */
    deletedKeys?: () => string;
    /** Soft deletes: a row the source lost is kept, marked (MergeInput). */
    softDelete?: { column: string; at: string };
    /** Told what the merge did to the table's earlier rows. */
    onMerged?: (counts: MergeCounts) => void;
    /** Columns a changed row may differ in and still be the row it replaces: nothing is written (MergeInput). */
    ignoredWhenCompared?: readonly string[];
  };
  /** Column types the catalog records instead of what Parquet holds (an ENUM Parquet keeps as its labels). */
  columnTypes?: Record<string, string>;
  /** `fill` reads the table's rows as they are (a compaction): its files are kept on local disk meanwhile. */
  readsCurrent?: boolean;
  /** Tags the table gets in the same commit (a cdc table's applied change position). */
  tags?: Record<string, string>;
  /** Asked once the parts are written: true makes them the table's rows (a TRUNCATE among a cdc table's changes). */
  replaceWhole?: () => boolean;
  /**
   * The write's DuckDB instance is asked for once this settles, however: a write that loads only after the write
   * before it (a MySQL sync's next table) then takes that one's instance, warm, instead of opening one of its own.
   */
  openAfter?: Promise<unknown>;
}

/** Writes the parts of a new version of a table, each with the catalog's column ids as its Parquet field ids. */
export interface PartWriter {
  /** Writes `selectSql`'s rows as part `index`; returns its rows. Every part of one version has the same columns. */
  copy(selectSql: string, index: number): Promise<number>;
  /**
   * The write's private DuckDB connection (for a fill's own statements). It opens while the fill starts, so a
   * source can already be read meanwhile (with openAfter: on first use, once that settled).
   */
  connection(): Promise<DuckDBConnection>;
}

/**
 * A sync's parts (written under a memory limit): zstd level 1 (faster to write than DuckDB's default level and,
 * measured on lineitem-like data, no larger); format version 2 (a quarter less CPU to write and a fifth smaller on
 * the bench's tables; DuckDB, Arrow and Spark read it); row groups of at most 16 MB, because DuckDB holds a row
 * group per thread in memory while writing it, outside its memory limit (at its default, a load of 500,000 rows
 * peaked at 330 MB instead of 250 MB); DuckDB allows that only without insertion order, which a table's rows do not
 * have anyway. Lake's own smaller writes (the demo, a compaction's test tables) keep DuckDB's defaults with zstd.
 */
const SYNC_PARQUET =
  "FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, PARQUET_VERSION v2, ROW_GROUP_SIZE_BYTES '16MB'";
const PARQUET = 'FORMAT parquet, COMPRESSION zstd';

/**
 * New versions of lake tables, the DuckLake way: the parts are written under the table's folder first (with
 * their field ids planned from the catalog), then one commit registers them and ends what they replace. Until the
 * commit, readers see the previous snapshot; a crash before it leaves only files no catalog row names, which the
 * collector removes.
 */
export class TableWrites {
  constructor(
    private readonly states: CatalogStates,
    private readonly layout: LakeLayout,
  ) {}

  /**
   * A write will follow once its rows are in (a cdc sync's, after the log is read): its DuckDB instance starts
   * opening now (openAhead). Answers what closes the instance if no write took it.
   */
  openAhead(memoryLimit?: string): () => void {
    return openAhead(this.instanceOptions(memoryLimit));
  }

  private instanceOptions(memoryLimit: string | undefined): PrivilegedOptions {
    return { memoryLimit, tempDirectory: join(this.layout.homeRoot, 'tmp', 'duckdb') };
  }

  async write(
    organizationId: string,
    schema: string,
    name: string,
    fill: (parts: PartWriter) => Promise<number>,
    options: WriteTableOptions,
    current: LakeTable | undefined,
  ): Promise<void> {
    const catalog = await this.states.catalog(organizationId);
    // A new table's folder is named once, here: its files are written before the commit gives it an id.
    const tablePath = current?.path ?? `${newId('tbl')}/`;
    const version = newId('v');
    const tableDir = join(this.layout.tablesDir(organizationId), tablePath);
    const dir = join(tableDir, version);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    let releaseHeld: Release = () => undefined;
    // The instance starts (tens of milliseconds) while the fill begins: an incremental sync's source read overlaps it.
    // With openAfter it is asked for on first use, once that settles: a fill that fails before then opens none.
    let opened: Promise<PrivilegedConnection> | undefined;
    const opening = (): Promise<PrivilegedConnection> => {
      opened ??= (options.openAfter ?? Promise.resolve())
        .then(
          () => undefined,
          () => undefined,
        )
        .then(() => openPrivilegedConnection(this.instanceOptions(options.memoryLimit)))
        .then(async (instance) => {
          // Row order within a version carries no meaning; not keeping it lets DuckDB stream the write in less memory.
          if (options.memoryLimit)
            await instance.connection.run('SET preserve_insertion_order = false').catch((error: unknown) => {
              instance.close();
              throw error;
            });
          mark(`${schema}.${name}: duckdb open`);
          return instance;
        });
      // Closed on every path, once opened: a failure to open is the write's failure, met where the connection is used.
      opened.catch(() => undefined);
      return opened;
    };
    if (!options.openAfter) void opening();
    try {
      const currentFiles = (current?.snapshot.files ?? []).map((file) => this.layout.toAbsolute(file));
      if (options.readsCurrent) releaseHeld = await this.layout.files.hold(currentFiles);
      let planned: Promise<{ shapes: ColumnShape[]; columns: CatalogColumn[] }> | undefined;
      const plan = async (
        connection: DuckDBConnection,
        selectSql: string,
      ): Promise<{ shapes: ColumnShape[]; columns: CatalogColumn[] }> => {
        const described = await connection.runAndReadAll(`DESCRIBE ${selectSql}`);
        mark(`${schema}.${name}: part described`);
        const shapes = described.getRowObjectsJS().map((row) => {
          const column = String(row.column_name);
          const nullable = options.notNull !== 'all' && !options.notNull?.has(column);
          return columnShape(column, options.columnTypes?.[column] ?? String(row.column_type), nullable);
        });
        return { shapes, columns: await catalog.planColumns(schema, name, shapes) };
      };
      const connectionOf = async (): Promise<DuckDBConnection> => (await opening()).connection;
      const parts: PartWriter = {
        connection: connectionOf,
        copy: async (selectSql, index) => {
          const connection = await connectionOf();
          planned ??= plan(connection, selectSql);
          const { columns } = await planned;
          mark(`${schema}.${name}: part ${index} planned`);
          const target = join(dir, `part-${index}.parquet`);
          const written = await connection.run(
            `COPY (${storedRowsSql(columns, `${selectSql}\n`)}) TO ${quoteLiteral(target)} (${options.memoryLimit ? SYNC_PARQUET : PARQUET}, ${fieldIdsOption(columns)})`,
          );
          return Number(written.rowsChanged);
        },
      };
      const rowCount = await fill(parts);
      mark(`${schema}.${name}: parts written`);
      const connection = await connectionOf();
      if (!planned) throw new Error(`No part of ${schema}.${name} was written.`);
      const { shapes, columns } = await planned;
      if (
        options.mergeOn &&
        current &&
        rowCount === 0 &&
        !options.mergeOn.presentKeys &&
        !options.mergeOn.deletedKeys
      ) {
        // Nothing changed: the table stays as it is, with no new snapshot.
        rmSync(dir, { recursive: true, force: true });
        return;
      }
      const partFiles = readdirSync(dir)
        .filter((f) => /^part-\d+\.parquet$/.test(f))
        .sort((a, b) => Number(a.slice(5, -8)) - Number(b.slice(5, -8)));
      const described: NewDataFile[] = [];
      for (const file of partFiles)
        described.push(await describeDataFile(connection, join(dir, file), `${version}/${file}`, columns));
      mark(`${schema}.${name}: parts described`);
      // Kept where lake keeps files (uploaded, with an object store) before any commit names them.
      await this.layout.files.publish(partFiles.map((file) => join(dir, file)));
      // A merge reads the table's key columns in every file it has: they must be on local disk meanwhile.
      if (options.mergeOn && current && !options.readsCurrent) releaseHeld = await this.layout.files.hold(currentFiles);
      const verb = options.mergeOn && current ? 'merged into' : 'written';
      let unchanged = false;
      await catalog.commit({ message: `lake: ${schema}.${name} ${verb}` }, async (write) => {
        const table = await write.table(await write.schema(schema), name, tablePath, shapes, columns);
        // Another writer made the table meanwhile, in a folder of its own: these files are not where it reads.
        if ((await write.tablePath(table.tableId)) !== tablePath)
          throw new Error(`${schema}.${name} was created by another writer meanwhile; write it again.`);
        for (const [key, value] of Object.entries(options.tags ?? {})) await write.setTag(table.tableId, key, value);
        if (!(options.mergeOn && current) || options.replaceWhole?.())
          return write.replaceFiles(
            table.tableId,
            current ? described.filter((file) => file.recordCount > 0) : described,
          );
        const before = await catalog.stateAt(write.snapshotId - 1);
        const previous = before.tables.find((t) => t.tableId === table.tableId);
        const { presentKeys, deletedKeys, softDelete, onMerged, ignoredWhenCompared } = options.mergeOn;
        const counts = await mergeChangedRows({
          write,
          connection,
          connect: async () => (await opening()).connect(),
          tableId: table.tableId,
          columns: table.columns,
          key: options.mergeOn.key,
          current: previous?.files ?? [],
          mappings: before.mappings,
          // An empty part (nothing changed, deletes only) is no file of the table.
          changed: described.filter((file) => file.recordCount > 0),
          toAbsolute: (path) => join(tableDir, path),
          deletesDir: version,
          ...(previous ? { columnsSince: previous.columnsSince } : {}),
          ...(presentKeys ? { presentKeys: presentKeys() } : {}),
          ...(deletedKeys ? { deletedKeys: deletedKeys() } : {}),
          ...(softDelete ? { softDelete } : {}),
          markedFile: `${version}/deleted-rows.parquet`,
          ...(ignoredWhenCompared ? { ignoredWhenCompared } : {}),
        });
        onMerged?.(counts);
        unchanged = (rowCount === 0 || counts.unchanged === true) && counts.replaced + counts.deleted === 0;
        // The delete files (and a soft delete's marked rows) the merge wrote, kept before the commit names them.
        const parts = new Set(partFiles);
        await this.layout.files.publish(
          readdirSync(dir)
            .filter((file) => !parts.has(file) && !file.startsWith('.'))
            .map((file) => join(dir, file)),
        );
      });
      // Deletes were looked for and none found, or the changed rows were the table's already: no snapshot was made,
      // and its parts are no one's (with an object store, their copies are swept as files no snapshot names).
      if (unchanged) rmSync(dir, { recursive: true, force: true });
      mark(`${schema}.${name}: committed`);
    } finally {
      releaseHeld();
      // Kept warm for the next table's write (a sync writes its tables one after another): see idleInstance.
      await opened?.then(
        (instance) => instance.release(),
        () => undefined,
      );
    }
  }
}
