import { mkdirSync } from 'node:fs';
import { relative, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { LakeLayout } from '../layout.js';
import type { DuckLakeCatalog } from './catalog.js';
import type { LegacyColumn, LegacyLake } from './legacy-lake.js';
import { registerLegacySnapshot } from './legacy-snapshot.js';
import { columnShape, type ColumnShape } from './types.js';
import { quoteIdentifier, quoteLiteral } from '../../engine/duckdb.js';
import { mergeableColumns } from './merge.js';
import { viewTags } from './view-tags.js';

/** One change to replay: a snapshot that became current, or a table taken out of the catalog. */
type Replayed =
  | { at: number; kind: 'snapshot'; entry: Awaited<ReturnType<LegacyLake['history']>>[number] }
  | { at: number; kind: 'drop'; schema: string; name: string };

/**
 * Converts what lake recorded of an organization's lake before DuckLake into its (empty) DuckLake catalog, in one
 * transaction, so a crash leaves the catalog empty to convert again, never half done. Every snapshot still kept
 * becomes a DuckLake snapshot at its own time, in order (time travel reaches as far back as retention kept),
 * tables taken out of the catalog are dropped when they were, and the views are created last. No data file is
 * rewritten: they are read by name; layered snapshots get delete files. Returns the snapshots written.
 */
export async function convertToDuckLake(input: {
  organizationId: string;
  legacy: LegacyLake;
  layout: LakeLayout;
  catalog: DuckLakeCatalog;
  connection: DuckDBConnection;
}): Promise<number> {
  const { catalog, layout, organizationId } = input;
  const history = await input.legacy.history(organizationId);
  const replay: Replayed[] = history.map((entry) => ({ at: entry.snapshot.created, kind: 'snapshot', entry }));
  const lastOf = new Map(history.map((entry) => [entry.table.id, entry]));
  for (const last of lastOf.values())
    if (last.supersededAt !== null)
      replay.push({ at: last.supersededAt, kind: 'drop', schema: last.table.schema, name: last.table.name });
  // Stable: a snapshot and the drop that followed it in the same second stay in that order.
  replay.sort((a, b) => a.at - b.at);
  const views = await input.legacy.views(organizationId);
  return catalog.atomically(async () => {
    if ((await catalog.currentSnapshot()) > 0) return 0;
    let written = 0;
    for (const change of replay) {
      const at = new Date(change.at * 1000);
      if (change.kind === 'drop') {
        await catalog.commit({ at, message: `converted: ${change.schema}.${change.name} taken out` }, async (write) => {
          const tableId = await write.liveTableId(change.schema, change.name);
          if (tableId !== undefined) await write.dropTable(tableId);
        });
        written++;
        continue;
      }
      const { table, snapshot } = change.entry;
      const tableDir = join(layout.tablesDir(organizationId), table.id);
      let layers = (snapshot.layers?.length ? snapshot.layers : [snapshot.files]).map((layer) =>
        layer.map((file) => relative(tableDir, layout.toAbsolute(file))),
      );
      const shapes = await legacyShapes(
        input.connection,
        layers.map((layer) => layer.map((file) => join(tableDir, file))),
        snapshot.columns,
      );
      // Delete files need DuckDB's file_row_number, which a column of that name hides: such a layered snapshot is
      // written once as one file, as that release read it (the only data a conversion rewrites).
      if (layers.length > 1 && !mergeableColumns(shapes.map((c) => c.name)))
        layers = [[await mergeLegacyLayers(input.connection, layers, snapshot.mergeKey ?? [], tableDir, snapshot.id)]];
      await catalog.commit({ at, message: `converted: lake snapshot ${snapshot.id}` }, async (write) => {
        const created = await write.table(await write.schema(table.schema), table.name, `${table.id}/`, shapes);
        await write.replaceFiles(created.tableId, []);
        await registerLegacySnapshot(
          write,
          input.connection,
          created,
          {
            layers,
            ...(snapshot.mergeKey ? { mergeKey: snapshot.mergeKey } : {}),
          },
          { toAbsolute: (path) => join(tableDir, path), deletesDir: `${snapshot.id}-deletes` },
        );
      });
      written++;
    }
    if (views.length > 0) {
      await catalog.commit({ message: 'converted: views' }, async (write) => {
        for (const view of views)
          await write.view(
            await write.schema(view.schema),
            view.name,
            view.sql,
            viewTags(view.references, view.columns),
          );
      });
      written++;
    }
    return written;
  });
}

/**
 * A legacy snapshot's columns as that release's readers saw them: its layers read together by name (UNION ALL BY
 * NAME widens a type a later layer wrote narrower, as the release's catalog view did), with the ENUM types and
 * nullability the release recorded.
 */
async function legacyShapes(
  connection: DuckDBConnection,
  layers: readonly (readonly string[])[],
  recorded: readonly LegacyColumn[],
): Promise<ColumnShape[]> {
  const read = layers
    .map((files) => `SELECT * FROM read_parquet([${files.map((f) => quoteLiteral(f)).join(', ')}])`)
    .join(' UNION ALL BY NAME ');
  const described = (await connection.runAndReadAll(`DESCRIBE ${read}`)).getRowObjectsJS();
  return described.map((row) => {
    const name = String(row.column_name);
    const known = recorded.find((c) => c.name === name);
    const type = known?.type.startsWith('ENUM(') ? known.type : String(row.column_type);
    return columnShape(name, type, known?.nullable ?? true);
  });
}

/** A layered legacy snapshot's rows as its release read them (each layer less the keys a later one holds), as one file. */
async function mergeLegacyLayers(
  connection: DuckDBConnection,
  layers: readonly (readonly string[])[],
  key: readonly string[],
  tableDir: string,
  snapshotId: string,
): Promise<string> {
  const read = (files: readonly string[]): string =>
    `read_parquet([${files.map((f) => quoteLiteral(join(tableDir, f))).join(', ')}])`;
  const match = key.map((k) => `n.${quoteIdentifier(k)} = o.${quoteIdentifier(k)}`).join(' AND ');
  const rows = layers
    .map((files, i) => {
      const later = layers.slice(i + 1).flat();
      return later.length === 0 || match === ''
        ? `SELECT * FROM ${read(files)}`
        : `SELECT o.* FROM ${read(files)} o WHERE NOT EXISTS (SELECT 1 FROM ${read(later)} n WHERE ${match})`;
    })
    .join(' UNION ALL BY NAME ');
  const path = `${snapshotId}-merged/part-0.parquet`;
  mkdirSync(join(tableDir, `${snapshotId}-merged`), { recursive: true, mode: 0o700 });
  await connection.run(`COPY (${rows}) TO ${quoteLiteral(join(tableDir, path))} (FORMAT parquet, COMPRESSION zstd)`);
  return path;
}
