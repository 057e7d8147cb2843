import type { TableAccess } from '../auth/permissions.js';
import { LakeServiceError } from '../core/errors.js';
import { AsOfError, versionName, type AsOfReference } from '../engine/as-of.js';
import type { CatalogStates } from './catalog-states.js';
import type { CatalogState, TableState } from './ducklake/catalog-state.js';
import type { LakeLayout } from './layout.js';
import { lakeTableOf, type LakeTable } from './tables.js';

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

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
            `Snapshot ${ref.at.version} is not in the lake: ${
              ref.at.version > current.snapshotId
                ? `the current one is ${current.snapshotId}`
                : `it is past retention (the oldest kept is ${kept[0]?.[0] ?? current.snapshotId}; lake keeps LAKE_SNAPSHOT_RETENTION_MINUTES of history)`
            }. lake catalog history ${written} lists the versions kept.`,
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
      if (!table) {
        // A view has no versions of its own: it reads its tables as they are.
        if (current.views.some((v) => same(v.schema, ref.schema) && same(v.name, ref.table)))
          throw new AsOfError(
            `${written} is a view, which lake reads only as it is now; read the tables it names AT a version instead.`,
          );
        // One that exists now was made later (or dropped and made again); one that does not was never there to read.
        const now = current.tables.some((t) => same(t.schema, ref.schema) && same(t.name, ref.table));
        throw new AsOfError(
          now
            ? `${written} did not exist at snapshot ${snapshot}. lake catalog history ${written} lists its versions.`
            : `There is no table ${written} at snapshot ${snapshot}, nor now. lake catalog ls lists the tables.`,
        );
      }
      const found = lakeTableOf(organizationId, state, table, this.layout);
      resolved.push({
        ...found,
        name: versionName(found.name, snapshot),
        snapshot: { ...found.snapshot, asOf: snapshot },
      });
    }
    return resolved;
  }

  /**
   * One page of schema.name's versions still kept, newest first: each snapshot that changed it, and when. After
   * `startingAfter` (a version's snapshot id, the cursor of the page before); undefined when the table has no version
   * kept. Each version is decided by its snapshot and the one before it, so a page reads the states of its own
   * versions and one more, however long retention is.
   */
  async versions(
    organizationId: string,
    schema: string,
    name: string,
    limit: number,
    startingAfter?: number,
  ): Promise<{ data: TableVersionEntry[]; hasMore: boolean } | undefined> {
    const current = await this.states.current(organizationId);
    const kept = [...current.snapshotTimes.keys()].sort((a, b) => a - b);
    // The oldest kept snapshot (the table as retention keeps it), then each later one that may have changed it.
    const changing = new Set(await (await this.states.catalog(organizationId)).snapshotsChanging(schema, name));
    const candidates = kept.filter((s, i) => i === 0 || changing.has(s));
    const versionAt = (index: number): Promise<TableVersionEntry | undefined> =>
      this.versionAt(organizationId, schema, name, candidates, index);
    let start = candidates.length - 1;
    if (startingAfter !== undefined) {
      const index = candidates.indexOf(startingAfter);
      if (index < 0 || !(await versionAt(index))) {
        for (let i = candidates.length - 1; i >= 0; i--) if (await versionAt(i)) throw invalidCursor(startingAfter);
        return undefined;
      }
      start = index - 1;
    }
    const data: TableVersionEntry[] = [];
    for (let i = start; i >= 0 && data.length <= limit; i--) {
      const version = await versionAt(i);
      if (version) data.push(version);
    }
    if (startingAfter === undefined && data.length === 0) return undefined;
    return { data: data.slice(0, limit), hasMore: data.length > limit };
  }

  /**
   * The version candidates[index] is, judged against the candidate before it: undefined when it did not change the
   * table (another table's change, of a table of the same name elsewhere) or the table was not there.
   */
  private async versionAt(
    organizationId: string,
    schema: string,
    name: string,
    candidates: readonly number[],
    index: number,
  ): Promise<TableVersionEntry | undefined> {
    const snapshot = candidates[index] as number;
    const find = (state: CatalogState): TableState | undefined =>
      state.tables.find((t) => same(t.schema, schema) && same(t.name, name));
    const state = await this.states.at(organizationId, snapshot);
    const table = find(state);
    const earlierSnapshot = index > 0 ? candidates[index - 1] : undefined;
    const earlierState =
      earlierSnapshot === undefined ? undefined : await this.states.at(organizationId, earlierSnapshot);
    const earlier = earlierState && find(earlierState);
    const created = Math.floor((state.snapshotTimes.get(snapshot)?.getTime() ?? 0) / 1000);
    if (!table) return earlier ? { snapshot, created, operation: 'dropped', rowCount: null } : undefined;
    if (earlier && table.changedAt === earlier.changedAt) return undefined;
    const lake = lakeTableOf(organizationId, state, table, this.layout).snapshot;
    const survivors = table.files.filter((f) => f.beginSnapshot < snapshot).length;
    let operation: TableVersionEntry['operation'];
    if (!earlier || !earlierState) operation = table.changedAt < snapshot ? 'kept' : 'created';
    else if (survivors === 0) operation = 'replaced';
    else {
      const columnsBefore = lakeTableOf(organizationId, earlierState, earlier, this.layout).snapshot.columns;
      operation =
        JSON.stringify(lake.columns) !== JSON.stringify(columnsBefore) && survivors === earlier.files.length
          ? 'altered'
          : 'merged';
    }
    return { snapshot, created, operation, rowCount: lake.rowCount };
  }
}

function invalidCursor(startingAfter: number): LakeServiceError {
  return new LakeServiceError(
    'invalid_cursor',
    `starting_after ${startingAfter} is not a version of this table still kept: give the next_cursor of the page before (a version past retention is no longer listed).`,
    { param: 'starting_after' },
  );
}
