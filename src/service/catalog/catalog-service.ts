import { UNRESTRICTED } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { LakeServiceError } from '../core/errors.js';
import type { Lake } from '../storage/lake.js';
import type { ColumnDescription, LakeTable } from '../storage/tables.js';
import type { TableVersionEntry } from '../storage/table-history.js';
import type { LakeView } from '../storage/views.js';
import type { PermissionStore } from '../auth/permissions.js';

export interface SchemaSummary {
  name: string;
  tableCount: number;
  viewCount: number;
  /** Latest commit or view change in the schema. */
  updated: number;
}

export interface CatalogEntry {
  kind: 'table' | 'view';
  schema: string;
  name: string;
  columns: ColumnDescription[];
  /** Rows and bytes of the current snapshot; null for views, which hold no data of their own. */
  rowCount: number | null;
  bytes: number | null;
  /** Last commit (tables) or definition change (views). */
  updated: number;
  /** The view's SQL; only for views. */
  sql?: string;
}

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

function tableEntry(table: LakeTable): CatalogEntry {
  return {
    kind: 'table',
    schema: table.schema,
    name: table.name,
    columns: table.snapshot.columns,
    rowCount: table.snapshot.rowCount,
    bytes: table.snapshot.bytes,
    updated: table.snapshot.created,
  };
}

function viewEntry(view: LakeView): CatalogEntry {
  return {
    kind: 'view',
    schema: view.schema,
    name: view.name,
    columns: view.columns,
    rowCount: null,
    bytes: null,
    updated: view.updated,
    sql: view.sql,
  };
}

/**
 * The catalog as one principal may see it. A name that does not exist and a name that is hidden get the same
 * 404, and every lookup is within the caller's organization, so nothing reveals what exists elsewhere.
 */
export class CatalogService {
  constructor(
    private readonly lake: Lake,
    private readonly permissions: PermissionStore,
  ) {}

  async schemas(principal: Principal): Promise<SchemaSummary[]> {
    const entries = await this.entriesFor(principal);
    const bySchema = new Map<string, SchemaSummary>();
    for (const entry of entries) {
      const summary = bySchema.get(entry.schema) ?? { name: entry.schema, tableCount: 0, viewCount: 0, updated: 0 };
      if (entry.kind === 'table') summary.tableCount++;
      else summary.viewCount++;
      summary.updated = Math.max(summary.updated, entry.updated);
      bySchema.set(entry.schema, summary);
    }
    return [...bySchema.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  async entries(principal: Principal, schema: string): Promise<CatalogEntry[]> {
    const found = (await this.entriesFor(principal)).filter((e) => same(e.schema, schema));
    if (found.length === 0) throw notFound(schema);
    return found;
  }

  async describe(principal: Principal, schema: string, name: string): Promise<CatalogEntry> {
    const entry = (await this.entriesFor(principal)).find((e) => same(e.schema, schema) && same(e.name, name));
    if (!entry) throw notFound(`${schema}.${name}`);
    if (entry.kind === 'table') return entry;
    // A view's columns follow its tables; building the current catalog refreshes them (with an object store, one
    // that reads only this view's tables).
    await this.lake.catalogFile(principal.organizationId, UNRESTRICTED, [], new Set([entry.name.toLowerCase()]));
    const view = await this.lake.views.get(principal.organizationId, entry.schema, entry.name);
    return view ? viewEntry(view) : entry;
  }

  /**
   * One page of a table's versions still kept (newest first), for time travel: what `AT (VERSION => n)` may name.
   * The cursor is a version's snapshot id. A table the caller may not read, at any snapshot, answers as one that
   * never existed.
   */
  async history(
    principal: Principal,
    schema: string,
    name: string,
    limit: number,
    startingAfter?: string,
  ): Promise<{ data: TableVersionEntry[]; hasMore: boolean }> {
    await this.permissions.assertServiceKeyAllowed(principal);
    const access = await this.permissions.accessFor(principal);
    const after = startingAfter === undefined ? undefined : versionCursor(startingAfter);
    const page =
      access.restricted && !access.canRead(schema, name)
        ? undefined
        : await this.lake.history.versions(principal.organizationId, schema, name, limit, after);
    if (!page) throw notFound(`${schema}.${name}`);
    return page;
  }

  private async entriesFor(principal: Principal): Promise<CatalogEntry[]> {
    await this.permissions.assertServiceKeyAllowed(principal);
    await this.lake.ensureDemo(principal.organizationId);
    const { tables, views } = await this.lake.visible(
      principal.organizationId,
      await this.permissions.accessFor(principal),
    );
    return [...tables.map(tableEntry), ...views.map(viewEntry)].sort(
      (a, b) => a.schema.localeCompare(b.schema) || a.name.localeCompare(b.name),
    );
  }
}

function notFound(name: string): LakeServiceError {
  return new LakeServiceError(
    'catalog_not_found',
    `No schema or table '${name.slice(0, 200)}' is visible to this credential.`,
  );
}

/** A history cursor: a snapshot id, as the page before gave it (next_cursor). */
function versionCursor(text: string): number {
  if (!/^[0-9]{1,15}$/.test(text))
    throw new LakeServiceError(
      'invalid_cursor',
      'starting_after is not a next_cursor of this history: a version is named by its snapshot id, a whole number.',
      { param: 'starting_after' },
    );
  return Number(text);
}
