import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { castSql, loadDuckDB, OFFLINE_CONFIG, quoteIdentifier, quoteLiteral } from '../engine/duckdb.js';
import type { LakeLayout } from './layout.js';
import { duckdbTypeOf } from './ducklake/types.js';
import { tableSourceSql, type ColumnDescription, type LakeTable, type TableSource } from './tables.js';
import type { LakeView } from './views.js';

export interface CatalogContents {
  tables: readonly LakeTable[];
  views: readonly LakeView[];
  /** Tables the session does not read (their files not fetched): their columns only, and a clear error if read. */
  unread?: ReadonlySet<LakeTable>;
}

/** Called with the columns DuckDB found for each view it could create, so stored descriptions stay current. */
export type ViewColumnsSeen = (view: LakeView, columns: ColumnDescription[]) => Promise<void> | void;

/**
 * The DuckDB database that query sessions attach READ_ONLY as `lake`: one view per table over the files the
 * DuckLake catalog names at one snapshot (read as the specification says: by field id, less deleted positions),
 * then the logical views. One file per snapshot (and per set of visible objects, for restricted principals), never
 * changed once written, so sessions in any process can attach it while a newer one is being built. It is a cache
 * of the DuckLake catalog, not a record of its own.
 */
export async function ensureCatalogFile(
  layout: LakeLayout,
  organizationId: string,
  fileName: string,
  contents: CatalogContents,
  seen?: ViewColumnsSeen,
): Promise<string> {
  const file = join(layout.catalogDir(organizationId), `${fileName}.duckdb`);
  // Used again: its time is now, so the collector, which removes a variant nobody used for the retention window,
  // leaves it (gone meanwhile, it is built again below).
  if (touched(file)) return file;
  mkdirSync(layout.catalogDir(organizationId), { recursive: true, mode: 0o700 });
  const temp = join(layout.catalogDir(organizationId), `.build-${randomBytes(6).toString('hex')}.duckdb`);
  const duckdb = await loadDuckDB();
  const instance = await duckdb.DuckDBInstance.create(':memory:', OFFLINE_CONFIG);
  try {
    const connection = await instance.connect();
    // Built under the name sessions will use, so logical views that say lake.<schema>.<table> bind here as there.
    await connection.run(`ATTACH ${quoteLiteral(temp)} AS lake; USE lake`);
    const schemas = new Set([...contents.tables.map((t) => t.schema), ...contents.views.map((v) => v.schema)]);
    const statements = [...schemas].map((schema) => `CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
    // DuckDB compares names case-insensitively: of two tables whose names differ only in case (left by syncs made
    // before lake kept names unique), the first stays and the other is left out, rather than the catalog failing
    // and every query with it.
    const created = new Set<string>();
    for (const table of contents.tables) {
      const key = `${table.schema.toLowerCase()}.${table.name.toLowerCase()}`;
      if (created.has(key)) continue;
      created.add(key);
      const rows = contents.unread?.has(table)
        ? unreadTableSql(table)
        : tableSourceSql(await withFewDeletesRead(connection, table.snapshot.source));
      statements.push(`CREATE VIEW ${quoteIdentifier(table.schema)}.${quoteIdentifier(table.name)} AS ${rows}`);
    }
    if (statements.length > 0) await connection.run(statements.join(';\n'));
    await createLogicalViews(connection, contents.views, seen);
    await connection.run('CHECKPOINT lake; USE memory; DETACH lake');
    connection.closeSync();
  } finally {
    instance.closeSync();
  }
  // rename is atomic; a concurrent builder of the same file writes an equivalent one.
  renameSync(temp, file);
  rmSync(`${temp}.wal`, { force: true });
  return file;
}

/** A delete file of at most this many positions is read as the catalog is built (withFewDeletesRead). */
const FEW_DELETES = 32;

/**
 * The table's files, those whose delete file lists few positions carrying them: each incremental merge leaves one
 * such file behind (the rows it read again at its cursor's last value are deleted from the file before), and every
 * read of the table would otherwise read that delete file and test each row against a bitmap of it (measured: 7
 * such files of 60,000 rows among 20 cost a group-by over 6,000,000 rows 6 ms of 64). The catalog file is built
 * once per snapshot, so they are read once. A delete file that cannot be read now leaves its file as it was.
 */
async function withFewDeletesRead(
  connection: import('@duckdb/node-api').DuckDBConnection,
  source: TableSource,
): Promise<TableSource> {
  const few = source.files.filter(
    (f) => f.deletePath !== null && f.mappingId === null && f.deleteCount !== undefined && f.deleteCount <= FEW_DELETES,
  );
  if (few.length === 0) return source;
  const absolute = (path: string): string => join(source.directory, path);
  try {
    const read = await connection.runAndReadAll(
      `SELECT filename, list(pos ORDER BY pos) AS positions
         FROM read_parquet([${few.map((f) => quoteLiteral(absolute(f.deletePath as string))).join(', ')}],
                           filename = true, hive_partitioning = false)
        GROUP BY filename`,
    );
    const positions = new Map(
      read.getRowObjectsJS().map((row) => [String(row.filename), (row.positions as bigint[]).map(Number)]),
    );
    return {
      ...source,
      files: source.files.map((f) => {
        const found = f.deletePath === null ? undefined : positions.get(absolute(f.deletePath));
        return found && few.includes(f) ? { ...f, deletedPositions: found } : f;
      }),
    };
  } catch {
    return source;
  }
}

/**
 * A table the statement did not name, with an object store: its columns for the catalog's own listings, and an
 * error, never an empty answer, if the query reads it after all (through a name lake did not see in its text).
 */
function unreadTableSql(table: LakeTable): string {
  const columns = table.snapshot.source.columns
    .map((c) => `${castSql('NULL', duckdbTypeOf(c))} AS ${quoteIdentifier(c.name)}`)
    .join(', ');
  const message = `${table.schema}.${table.name} was not fetched for this query: name it in the statement itself.`;
  return `SELECT ${columns} FROM (SELECT 1) WHERE error(${quoteLiteral(message)})`;
}

/**
 * Views may build on views, so they are created in rounds until no more succeed. A view whose tables are gone
 * stays out of the catalog (queries naming it fail as for any missing table) rather than failing every query.
 */
async function createLogicalViews(
  connection: import('@duckdb/node-api').DuckDBConnection,
  views: readonly LakeView[],
  seen?: ViewColumnsSeen,
): Promise<void> {
  let pending = [...views];
  while (pending.length > 0) {
    const failed: LakeView[] = [];
    for (const view of pending) {
      const name = `${quoteIdentifier(view.schema)}.${quoteIdentifier(view.name)}`;
      try {
        await connection.run(`CREATE VIEW ${name} AS ${view.sql}`);
        const described = await connection.runAndReadAll(`DESCRIBE ${name}`);
        await seen?.(
          view,
          described.getRowObjectsJS().map((row) => ({
            name: String(row.column_name),
            type: String(row.column_type),
            nullable: String(row.null) !== 'NO',
          })),
        );
      } catch {
        // A view that no longer binds (a table it reads was dropped) is reported with the others, not fatal.
        failed.push(view);
      }
    }
    if (failed.length === pending.length) return;
    pending = failed;
  }
}

/** Sets a file's times to now; false when it is not there. */
function touched(file: string): boolean {
  try {
    const now = new Date();
    utimesSync(file, now, now);
    return true;
  } catch {
    return existsSync(file);
  }
}
