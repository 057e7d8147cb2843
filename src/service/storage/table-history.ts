import type { TableAccess } from '../auth/permissions.js';
import { LakeServiceError } from '../core/errors.js';
import { AsOfError, type AsOfReference } from '../engine/as-of.js';
import type { CatalogStates } from './catalog-states.js';
import type { LakeLayout } from './layout.js';
import { lakeTableOf, type LakeTable } from './tables.js';

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** The name a table's version has in a query's catalog: DuckDB's `AT` is rewritten to read it (decision 48). */
export const versionName = (table: string, snapshot: number): string => `${table}@${snapshot}`;

/** One version of a table, as `lake catalog history` lists it. */
export interface TableVersionEntry {
  snapshot: number;
  /** Epoch seconds. */
  created: number;
  /** `kept`: the oldest version retention keeps, written before its window (by a change no longer listed). */
  operation: 'created' | 'replaced' | 'merged' | 'altered' | 'dropped' | 'kept';
  rowCount: number | null;
}

/**
 * Tables as of earlier snapshots: what `AT (VERSION => n)` and `AT (TIMESTAMP => t)` read, and a table's history.
 * Access is the caller's grants by name, at any snapshot: a table hidden now is hidden then too.
 */
export class TableHistory {
  constructor(
    private readonly states: CatalogStates,
    private readonly layout: LakeLayout,
  ) {}

  /** Each reference's table at its snapshot, named versionName(table, snapshot). */
  async resolve(
    organizationId: string,
    access: TableAccess,
    references: readonly AsOfReference[],
  ): Promise<LakeTable[]> {
    const current = await this.states.current(organizationId);
    const kept = [...current.snapshotTimes.entries()].sort((a, b) => a[0] - b[0]);
    const resolved: LakeTable[] = [];
    for (const ref of references) {
      const written = `${ref.schema}.${ref.table}`.slice(0, 300);
      if (access.restricted && !access.canRead(ref.schema, ref.table))
        throw new LakeServiceError(
          'grant_table_denied',
          `This credential may not read ${written}. Ask an owner for a grant (lake admin grant).`,
        );
      let snapshot: number | undefined;
      if ('version' in ref.at) {
        snapshot = current.snapshotTimes.has(ref.at.version) ? ref.at.version : undefined;
        if (snapshot === undefined)
          throw new AsOfError(
            `Snapshot ${ref.at.version} is not in the lake: it is newer than the current one (${current.snapshotId}) or past retention (the oldest kept is ${kept[0]?.[0] ?? current.snapshotId}). lake catalog history ${written} lists the versions kept.`,
          );
      } else {
        const time = ref.at.time;
        snapshot = kept.filter(([, at]) => at.getTime() <= time).pop()?.[0];
        if (snapshot === undefined)
          throw new AsOfError(
            `${new Date(time).toISOString()} is before the oldest snapshot kept (${kept[0]?.[1].toISOString() ?? 'none'}); lake keeps LAKE_SNAPSHOT_RETENTION_MINUTES of history.`,
          );
      }
      const state = await this.states.at(organizationId, snapshot);
      const table = state.tables.find((t) => same(t.schema, ref.schema) && same(t.name, ref.table));
      if (!table) throw new AsOfError(`${written} did not exist at snapshot ${snapshot}.`);
      const found = lakeTableOf(organizationId, state, table, this.layout);
      resolved.push({
        ...found,
        name: versionName(found.name, snapshot),
        snapshot: { ...found.snapshot, asOf: snapshot },
      });
    }
    return resolved;
  }

  /** The versions of schema.name still kept, newest first: each snapshot that changed it, and when. */
  async versions(organizationId: string, schema: string, name: string): Promise<TableVersionEntry[]> {
    const current = await this.states.current(organizationId);
    const kept = [...current.snapshotTimes.keys()].sort((a, b) => a - b);
    // The oldest kept snapshot (the table as retention keeps it), then each later one that changed the table.
    const changing = new Set(await (await this.states.catalog(organizationId)).snapshotsChanging(schema, name));
    const snapshots = kept.filter((s, i) => i === 0 || changing.has(s));
    const entries: TableVersionEntry[] = [];
    let before: { changedAt: number; rowCount: number; files: number; columns: string } | undefined;
    for (const snapshot of snapshots) {
      const state = await this.states.at(organizationId, snapshot);
      const table = state.tables.find((t) => same(t.schema, schema) && same(t.name, name));
      const created = Math.floor((state.snapshotTimes.get(snapshot)?.getTime() ?? 0) / 1000);
      if (!table) {
        if (before) entries.push({ snapshot, created, operation: 'dropped', rowCount: null });
        before = undefined;
        continue;
      }
      if (before && table.changedAt === before.changedAt) continue;
      const lake = lakeTableOf(organizationId, state, table, this.layout).snapshot;
      const columns = JSON.stringify(lake.columns);
      const survivors = table.files.filter((f) => f.beginSnapshot < snapshot).length;
      const operation: TableVersionEntry['operation'] = !before
        ? table.changedAt < snapshot
          ? 'kept'
          : 'created'
        : survivors === 0
          ? 'replaced'
          : columns !== before.columns && survivors === before.files
            ? 'altered'
            : 'merged';
      entries.push({ snapshot, created, operation, rowCount: lake.rowCount });
      before = { changedAt: table.changedAt, rowCount: lake.rowCount, files: table.files.length, columns };
    }
    return entries.reverse();
  }
}
