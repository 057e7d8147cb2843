import type { TableAccess, PermissionStore } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { lakeTableOf } from './lake-schema.js';
import { lakeTableNames } from './lake-names.js';
import type { SourceRecord, SourceStore, SourceSummary } from './source-store.js';

/** What a sync object, a sync event or a log entry says of one table. */
export interface TableMention {
  table?: unknown;
  lake_table?: unknown;
}

/** A sync's failure reason names its failed tables: a restricted reader is told only that some failed. */
export const HIDDEN_REASON = 'Some tables of this sync failed; the source shows the ones you may see.';

/**
 * What a restricted credential (table permissions on, not an owner) may see of sources: the same tables the catalog
 * shows it. A source lists only those tables, and sync objects, sync events and logs mention only them. The
 * services that return sources, syncs and logs apply it, so no route can forget to. Unrestricted credentials see
 * everything of their organization.
 */
export class SourceAccess {
  constructor(
    private readonly permissions: PermissionStore,
    private readonly sources: SourceStore,
  ) {}

  accessFor(principal: Principal): Promise<TableAccess> {
    return this.permissions.accessFor(principal);
  }

  /** The source with only the tables whose lake tables the principal may read. */
  async source(principal: Principal, source: SourceRecord): Promise<SourceRecord> {
    const access = await this.accessFor(principal);
    if (!access.restricted) return source;
    const names = lakeTableNames(source);
    return {
      ...source,
      tables: source.tables.filter((t) =>
        access.canRead(source.lakeSchema, names.get(`${t.schema}.${t.name}`) as string),
      ),
    };
  }

  /** A listed source whose table counts, for a restricted principal, are of the tables it may read. */
  async summary(principal: Principal, summary: SourceSummary): Promise<SourceSummary> {
    const access = await this.accessFor(principal);
    if (!access.restricted) return summary;
    const source = await this.sources.getIncludingDeleted(summary.id);
    const visible = source ? (await this.source(principal, source)).tables : [];
    return { ...summary, tableCount: visible.length, enabledTableCount: visible.filter((t) => t.enabled).length };
  }

  /** Of what a source's sync or log mentions, the items the principal may see. */
  async mentions<T extends TableMention>(principal: Principal, sourceId: string, items: readonly T[]): Promise<T[]> {
    const access = await this.accessFor(principal);
    if (!access.restricted) return [...items];
    const shown = await Promise.all(items.map((item) => this.mentionVisible(access, sourceId, item)));
    return items.filter((_, i) => shown[i]);
  }

  /** Log entries about tables the principal may not read are left out. */
  async logEntries<T extends { sourceId: string; table: string | null }>(
    principal: Principal,
    entries: readonly T[],
  ): Promise<T[]> {
    const access = await this.accessFor(principal);
    if (!access.restricted) return [...entries];
    const shown = await Promise.all(
      entries.map(
        async (entry) =>
          entry.table === null || (await this.mentionVisible(access, entry.sourceId, { table: entry.table })),
      ),
    );
    return entries.filter((_, i) => shown[i]);
  }

  /** How the principal sees the events of one source's sync: undefined leaves an event out. */
  async eventView(
    principal: Principal,
    sourceId: string,
  ): Promise<(type: string, data: Record<string, unknown>) => Promise<Record<string, unknown> | undefined>> {
    const access = await this.accessFor(principal);
    if (!access.restricted) return async (_type, data) => data;
    return async (type, data) => {
      if (type.startsWith('sync.') && !(await this.mentionVisible(access, sourceId, data))) return undefined;
      // A final event carries the job's error, whose tables_failed message names every failed table.
      const error = data.error as { code?: unknown } | undefined;
      if (error?.code === 'tables_failed') return { ...data, error: { ...error, message: HIDDEN_REASON } };
      return data;
    };
  }

  /** A table named by its lake table (`lake.schema.table`) or by its source key (`schema.table`). */
  private async mentionVisible(access: TableAccess, sourceId: string, mention: TableMention): Promise<boolean> {
    if (typeof mention.lake_table === 'string') {
      // lake.<schema>.<table>: the schema has no dot (lakeSchemaFor); a table name may.
      const [, schema, ...rest] = mention.lake_table.split('.');
      const table = rest.join('.');
      return schema !== undefined && table !== '' && access.canRead(schema, table);
    }
    if (typeof mention.table !== 'string') return true;
    const source = await this.sources.getIncludingDeleted(sourceId);
    if (!source) return false;
    const dot = mention.table.indexOf('.');
    return access.canRead(
      source.lakeSchema,
      lakeTableOf(source, mention.table.slice(0, dot), mention.table.slice(dot + 1)),
    );
  }
}
