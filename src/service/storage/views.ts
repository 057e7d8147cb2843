import type { CatalogState, ViewState } from './ducklake/catalog-state.js';
import { COLUMNS_TAG, fromViewTags, viewTags } from './ducklake/view-tags.js';
import type { CatalogStates } from './catalog-states.js';
import type { ColumnDescription } from './tables.js';

export interface ObjectName {
  schema: string;
  name: string;
}

/** A logical view: named SQL over lake tables and views, a DuckLake view of the organization's catalog. */
export interface LakeView {
  /** The DuckLake view id. */
  id: number;
  organizationId: string;
  schema: string;
  name: string;
  sql: string;
  /** The lake tables and views its SQL names directly. */
  references: ObjectName[];
  columns: ColumnDescription[];
  created: number;
  updated: number;
}

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

export function lakeViewOf(organizationId: string, state: CatalogState, view: ViewState): LakeView {
  const created = Math.floor((state.snapshotTimes.get(view.beginSnapshot)?.getTime() ?? 0) / 1000);
  return {
    id: view.viewId,
    organizationId,
    schema: view.schema,
    name: view.name,
    sql: view.sql,
    ...fromViewTags(view.tags),
    created,
    updated: created,
  };
}

/** The organization's views as its DuckLake catalog has them now; creating or dropping one is a commit. */
export class ViewStore {
  constructor(private readonly states: CatalogStates) {}

  async list(organizationId: string): Promise<LakeView[]> {
    const state = await this.states.current(organizationId);
    return state.views.map((v) => lakeViewOf(organizationId, state, v));
  }

  async get(organizationId: string, schema: string, name: string): Promise<LakeView | undefined> {
    const state = await this.states.current(organizationId);
    const view = state.views.find((v) => same(v.schema, schema) && same(v.name, name));
    return view && lakeViewOf(organizationId, state, view);
  }

  async insert(
    organizationId: string,
    schema: string,
    name: string,
    sql: string,
    references: ObjectName[],
    columns: ColumnDescription[],
  ): Promise<LakeView> {
    const catalog = await this.states.catalog(organizationId);
    await catalog.commit({ message: `lake: view ${schema}.${name} created` }, async (write) =>
      write.view(await write.schema(schema), name, sql, viewTags(references, columns)),
    );
    return (await this.get(organizationId, schema, name)) as LakeView;
  }

  async remove(organizationId: string, schema: string, name: string): Promise<boolean> {
    const catalog = await this.states.catalog(organizationId);
    const view = await this.get(organizationId, schema, name);
    if (!view) return false;
    const { result } = await catalog.commit({ message: `lake: view ${schema}.${name} dropped` }, async (write) => {
      const live = await write.liveViewId(view.schema, view.name);
      if (live === undefined) return false;
      await write.dropView(live);
      return true;
    });
    return result;
  }

  /**
   * A view's columns follow its tables: building a session's catalog describes it again and keeps what it found,
   * in the catalog (a tag lake derives, not a change of its own) and in the state already read.
   */
  async updateColumns(organizationId: string, view: LakeView, columns: ColumnDescription[]): Promise<void> {
    const value = viewTags([], columns)[COLUMNS_TAG] as string;
    await (await this.states.catalog(organizationId)).refreshTag(view.id, COLUMNS_TAG, value);
    const state = await this.states.current(organizationId);
    for (const seen of state.views) if (seen.viewId === view.id) seen.tags[COLUMNS_TAG] = value;
  }
}
