import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { UNRESTRICTED, type TableAccess } from '../auth/permissions.js';
import { closeIdleInstance, openPrivilegedConnection, quoteLiteral } from '../engine/duckdb.js';
import { inspectStatement } from '../engine/inspect.js';
import { tableNamesIn } from '../engine/table-names.js';
import { prepareSelect } from '../engine/query-runner.js';
import { guardSql } from '../engine/sql-guard.js';
import { LakeServiceError } from '../core/errors.js';
import type { MetadataDb } from '../store/metadata-db.js';
import { ensureCatalogFile, type CatalogContents } from './catalog-file.js';
import { CatalogStates } from './catalog-states.js';
import { DEMO_TABLES } from './demo.js';
import { LakeCatalogs } from './ducklake/lake-catalogs.js';
import type { LakeLayout } from './layout.js';
import { checkObjectName } from './names.js';
import { SettingsStore } from '../home/settings-store.js';
import { lakeTableOf, TableStore, tableSourceSql, type ColumnDescription, type LakeTable } from './tables.js';
import { TableHistory } from './table-history.js';
import { TableWrites, type PartWriter, type WriteTableOptions } from './table-writes.js';
import { AsOfError, findAsOf, mayHoldAsOf, type AsOfReference } from '../engine/as-of.js';
import { lakeViewOf, ViewStore, type LakeView, type ObjectName } from './views.js';

export type { PartWriter, WriteTableOptions } from './table-writes.js';

/** The table names a statement reads through `names`: those names, and what the views among them read, in turn. */
function namesRead(names: ReadonlySet<string>, views: readonly LakeView[]): Set<string> {
  const found = new Set<string>();
  const pending = [...names];
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (found.has(name)) continue;
    found.add(name);
    for (const view of views)
      if (view.name.toLowerCase() === name) pending.push(...view.references.map((r) => r.name.toLowerCase()));
  }
  return found;
}

const DEMO_SEEDED_KEY = 'demo_seeded';

/** Merges a table may have on top of its last full write before an incremental sync rewrites it whole. */
export const MAX_MERGES = 8;

/**
 * Lake table storage: each organization's lake is a DuckLake 1.0 catalog (decision 48) over immutable Parquet
 * files; every change is one commit of a new snapshot.
 */
export class Lake {
  readonly tables: TableStore;
  readonly views: ViewStore;
  readonly catalogs: LakeCatalogs;
  readonly history: TableHistory;
  private readonly states: CatalogStates;
  private readonly writes: TableWrites;
  private readonly settings: SettingsStore;

  constructor(
    db: MetadataDb,
    readonly layout: LakeLayout,
    createdBy = 'lake',
  ) {
    this.catalogs = new LakeCatalogs(db, layout, createdBy);
    this.states = new CatalogStates(this.catalogs);
    this.tables = new TableStore(this.states, layout);
    this.views = new ViewStore(this.states);
    this.writes = new TableWrites(this.states, layout);
    this.history = new TableHistory(this.states, layout);
    this.settings = new SettingsStore(db);
  }

  /** Writes the result of lake-internal SQL as a new version of schema.name, then commits it. */
  async writeTable(
    organizationId: string,
    schema: string,
    name: string,
    selectSql: string,
    options: WriteTableOptions = {},
  ): Promise<LakeTable> {
    return this.writeSnapshot(organizationId, schema, name, (parts) => parts.copy(selectSql, 0), options);
  }

  /** A write will follow (TableWrites.openAhead): its DuckDB instance starts opening; answers what lets it go. */
  openWriteAhead(memoryLimit?: string): () => void {
    return this.writes.openAhead(memoryLimit);
  }

  /**
   * Writes a new version of schema.name with `fill`, which writes one or more Parquet parts through a private
   * DuckDB connection and returns the row count; then commits it as a snapshot of the catalog. Until the commit,
   * readers see the previous snapshot; a crash before it leaves only files no snapshot names.
   */
  async writeSnapshot(
    organizationId: string,
    schema: string,
    name: string,
    fill: (parts: PartWriter) => Promise<number>,
    options: WriteTableOptions = {},
  ): Promise<LakeTable> {
    const current = await this.tables.get(organizationId, schema, name);
    await this.writes.write(organizationId, schema, name, fill, options, current);
    return (await this.tables.get(organizationId, schema, name)) as LakeTable;
  }

  /**
   * Sets tags of a table in a commit of their own, its rows untouched: a cdc table whose position moved on past
   * changes that were none of its own. Nothing happens to a table that is gone.
   */
  async tagTable(organizationId: string, schema: string, name: string, tags: Record<string, string>): Promise<void> {
    const catalog = await this.catalogs.for(organizationId);
    await catalog.commit({ message: `lake: ${schema}.${name} tagged` }, async (write) => {
      const tableId = await write.liveTableId(schema, name);
      if (tableId === undefined) return;
      for (const [key, value] of Object.entries(tags)) await write.setTag(tableId, key, value);
    });
  }

  /** The SQL that reads a table's rows as it is now (lake's own reads: a compaction's merge). */
  rowsSql(table: LakeTable): string {
    return tableSourceSql(table.snapshot.source);
  }

  /** Bytes of every file the organization's kept snapshots read, current and earlier: what its lake holds on disk. */
  async storedBytes(organizationId: string): Promise<number> {
    return (await this.catalogs.for(organizationId)).storedBytes();
  }

  async close(): Promise<void> {
    await this.catalogs.close();
    // The instance a finished write left warm for the next one: no write follows a closed lake.
    closeIdleInstance();
  }

  /**
   * What an access may see at the current snapshot: its tables, and the views it may read whose every table and
   * view it may read too (a view never opens a way around a grant).
   */
  async visible(
    organizationId: string,
    access: TableAccess = UNRESTRICTED,
    /** Another snapshot than the current one (a session rebuilt as it was planned). */
    snapshot?: number,
  ): Promise<CatalogContents & { version: number }> {
    const state =
      snapshot === undefined
        ? await this.states.current(organizationId)
        : await this.states.at(organizationId, snapshot);
    const version = state.snapshotId;
    // One snapshot's tables and views, so a session never sees a view without the table it reads.
    const tables = state.tables.map((t) => lakeTableOf(organizationId, state, t, this.layout));
    const views = state.views.map((v) => lakeViewOf(organizationId, state, v));
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
  }

  /**
   * The catalog file a session attaches: the organization's current version, cut down to what the access may see
   * when it is restricted (so even the engine cannot name a hidden table). Built on first use.
   */
  async catalogFile(
    organizationId: string,
    access: TableAccess = UNRESTRICTED,
    /** Tables the query reads at earlier snapshots (AT clauses): added as views named versionName(table, s). */
    asOf: readonly AsOfReference[] = [],
    /**
     * The names (lower case) the statement reads tables or views by, when known. With an object store only those
     * tables' files are fetched; the others are in the file as their columns alone (catalog queries see them, a read
     * fails clearly).
     */
    reading?: ReadonlySet<string>,
    /** The snapshot to build it at, when not the current one (a session rebuilt on another replica). */
    snapshot?: number,
  ): Promise<{
    file: string;
    /** With an object store, the files the session reads, relative to the data root (none in a local directory). */
    files: string[];
    /** For a restricted access: the tables and views it may see (schema.name, lower case). */
    visible?: string[];
    tables: LakeTable[];
    views: readonly LakeView[];
    /** The earlier versions of tables the AT references read (also among `tables`). */
    versions: LakeTable[];
    version: number;
    /** Per AT reference, in order: the version's view in the file, and its snapshot. */
    asOf: { schema: string; table: string; snapshot: number }[];
  }> {
    await this.ensureDemo(organizationId);
    const { version, tables, views } = await this.visible(organizationId, access, snapshot);
    const versions = asOf.length > 0 ? await this.history.resolve(organizationId, access, asOf) : [];
    const unique = [...new Map(versions.map((t) => [key(t), t])).values()];
    const restricted = access.restricted ? [...tables.map(key), '|', ...views.map(key)] : [];
    const unread =
      this.layout.files.kind === 'object_store' && reading !== undefined
        ? new Set(tables.filter((t) => !namesRead(reading, views).has(t.name.toLowerCase())))
        : new Set<LakeTable>();
    const read = [...tables.filter((t) => !unread.has(t)), ...unique];
    const stored = this.layout.files.kind === 'object_store';
    const files = stored ? [...new Set(read.flatMap((t) => t.snapshot.files))] : [];
    const extra = [...unique.map(key), ...(unread.size > 0 ? ['|', ...read.map(key)] : [])];
    const fileName =
      restricted.length + extra.length === 0
        ? `s${version}`
        : `s${version}-r${createHash('sha256')
            .update([...restricted, '|', ...extra].join('\n'))
            .digest('hex')
            .slice(0, 16)}`;
    // Its views are bound as it is built: the files they read must be on local disk meanwhile. In a local
    // directory, a stat per table folder tells a server that lacks them (replicas that share none) first.
    const release = stored
      ? await this.layout.files.hold(
          files.map((path) => this.layout.toAbsolute(path)),
          new Map(
            read.flatMap((t) =>
              [...t.snapshot.fileSizes]
                // A size the catalog does not know (0) is checked against the store's own.
                .filter(([, size]) => size > 0)
                .map(([path, size]) => [this.layout.toAbsolute(path), size] as const),
            ),
          ),
        )
      : await this.layout.files.hold(read.map((t) => join(this.layout.tablesDir(organizationId), t.path)));
    const file = await ensureCatalogFile(
      this.layout,
      organizationId,
      fileName,
      { tables: [...tables, ...unique], views, unread },
      async (view, columns) => {
        if (JSON.stringify(columns) !== JSON.stringify(view.columns))
          await this.views.updateColumns(organizationId, view, columns);
      },
    ).finally(release);
    return {
      file,
      files,
      ...(access.restricted
        ? { visible: [...tables, ...views].map((o) => `${o.schema}.${o.name}`.toLowerCase()) }
        : {}),
      tables: [...tables, ...unique],
      views,
      versions: unique,
      version,
      asOf: versions.map((t) => ({ schema: t.schema, table: t.name, snapshot: t.snapshot.asOf ?? version })),
    };
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
    // With an object store, only the tables its SQL names are fetched to bind it.
    const { file } = await this.catalogFile(organizationId, UNRESTRICTED, [], tableNamesIn(statement));
    const { connection, close } = await openPrivilegedConnection();
    try {
      await connection.run(`ATTACH ${quoteLiteral(file)} AS lake (READ_ONLY); USE lake`);
      // A view reads its tables as they are when it is queried: a version it named would be gone with retention.
      const readsVersions =
        mayHoldAsOf(statement) &&
        (await findAsOf(connection, statement).then(
          (found) => found.references.length > 0,
          (error: unknown) => error instanceof AsOfError,
        ));
      if (readsVersions)
        throw new LakeServiceError(
          'parameter_invalid',
          'A view reads its tables as they are when it is queried, not AT a version or time (retention removes old versions); read the version in the query that uses the view instead.',
          { param: 'sql' },
        );
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
   * Seeds lake.demo once per organization. Of two processes seeding a table at once, one commits it and the other
   * keeps that one (its own files are left for collection).
   */
  async ensureDemo(organizationId: string): Promise<void> {
    // Once seeded, always seeded (the mark is only ever added): known here, it costs no look at the store.
    if (this.seeded.has(organizationId)) return;
    const key = `${DEMO_SEEDED_KEY}:${organizationId}`;
    if ((await this.settings.get(key)) !== undefined) {
      this.seeded.add(organizationId);
      return;
    }
    // Requests of this process arriving at once seed once.
    let seeding = this.seeding.get(organizationId);
    if (!seeding) {
      seeding = this.seedDemo(organizationId).finally(() => this.seeding.delete(organizationId));
      this.seeding.set(organizationId, seeding);
    }
    await seeding;
    await this.settings.setIfAbsent(key, String(Math.floor(Date.now() / 1000)));
    this.seeded.add(organizationId);
  }

  private readonly seeding = new Map<string, Promise<void>>();
  /** Organizations whose demo tables this process has found seeded. */
  private readonly seeded = new Set<string>();

  private async seedDemo(organizationId: string): Promise<void> {
    for (const table of DEMO_TABLES) {
      if (await this.tables.get(organizationId, 'demo', table.name)) continue;
      try {
        // lake generates every demo value, so every column is known to be complete.
        await this.writeTable(organizationId, 'demo', table.name, table.sql, { notNull: 'all' });
      } catch (error) {
        // Another process seeded the same table first: its copy is as good as this one.
        if (!(await this.tables.get(organizationId, 'demo', table.name))) throw error;
      }
    }
  }
}

const key = (object: { schema: string; name: string }): string =>
  `${object.schema.toLowerCase()}\u0000${object.name.toLowerCase()}`;
