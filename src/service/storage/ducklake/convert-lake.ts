import { relative, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { LakeLayout } from '../layout.js';
import { layersOf } from '../snapshot-sql.js';
import type { TableStore } from '../tables.js';
import type { ViewStore } from '../views.js';
import type { DuckLakeCatalog } from './catalog.js';
import { registerLegacySnapshot } from './legacy-snapshot.js';
import { columnShape } from './types.js';

/** One change to replay: a snapshot that became current, or a table taken out of the catalog. */
type Replayed =
  | { at: number; kind: 'snapshot'; entry: Awaited<ReturnType<TableStore['history']>>[number] }
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
  tables: TableStore;
  views: ViewStore;
  layout: LakeLayout;
  catalog: DuckLakeCatalog;
  connection: DuckDBConnection;
}): Promise<number> {
  const { catalog, layout, organizationId } = input;
  const history = await input.tables.history(organizationId);
  const replay: Replayed[] = history.map((entry) => ({ at: entry.snapshot.created, kind: 'snapshot', entry }));
  const lastOf = new Map(history.map((entry) => [entry.table.id, entry]));
  for (const last of lastOf.values())
    if (last.supersededAt !== null)
      replay.push({ at: last.supersededAt, kind: 'drop', schema: last.table.schema, name: last.table.name });
  // Stable: a snapshot and the drop that followed it in the same second stay in that order.
  replay.sort((a, b) => a.at - b.at);
  const views = await input.views.list(organizationId);
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
      await catalog.commit({ at, message: `converted: lake snapshot ${snapshot.id}` }, async (write) => {
        const created = await write.table(
          await write.schema(table.schema),
          table.name,
          `${table.id}/`,
          snapshot.columns.map((c) => columnShape(c.name, c.type, c.nullable)),
        );
        await write.replaceFiles(created.tableId, []);
        await registerLegacySnapshot(
          write,
          input.connection,
          created,
          {
            layers: layersOf(snapshot).map((layer) => layer.map((file) => relative(tableDir, layout.toAbsolute(file)))),
            ...(snapshot.mergeKey ? { mergeKey: snapshot.mergeKey } : {}),
          },
          { toAbsolute: (path) => join(tableDir, path), deletesDir: `${snapshot.id}-deletes` },
        );
      });
      written++;
    }
    if (views.length > 0) {
      await catalog.commit({ message: 'converted: views' }, async (write) => {
        for (const view of views) await write.view(await write.schema(view.schema), view.name, view.sql);
      });
      written++;
    }
    return written;
  });
}
