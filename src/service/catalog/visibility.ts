import type { Principal } from '../auth/principal.js';
import type { Canvas } from '../canvases/canvas-service.js';
import type { QueryService } from '../queries/query-service.js';
import type { SendRecord } from '../sends/send-store.js';
import { lakeTableOf } from '../sources/lake-schema.js';
import { lakeTableNames } from '../sources/lake-names.js';
import type { SourceRecord, SourceSummary, SourceStore } from '../sources/source-store.js';
import { committedRows, type SyncView } from '../syncs/sync-service.js';
import type { PermissionStore, TableAccess } from '../auth/permissions.js';

/** What a sync object or event says of one table. */
interface TableMention {
  table?: unknown;
  lake_table?: unknown;
}

/** A sync's failure reason names its failed tables: a restricted reader is told only that some failed. */
const HIDDEN_REASON = 'Some tables of this sync failed; the source shows the ones you may see.';

/**
 * What a restricted credential (table permissions on, not an owner) may see beyond the catalog: the same tables the
 * catalog shows it, on every endpoint that names tables. Sources list only those tables, sync objects and events
 * count only them, logs about other tables are left out, and sends and canvas elements whose SQL names a table it
 * may not read are not shown. Unrestricted credentials see everything of their organization.
 */
export class Visibility {
  constructor(
    private readonly permissions: PermissionStore,
    private readonly sources: SourceStore,
    private readonly queries: QueryService,
  ) {}

  async access(principal: Principal): Promise<TableAccess> {
    return this.permissions.accessFor(principal);
  }

  /** The source with only the tables whose lake tables the principal may read. */
  async source(principal: Principal, source: SourceRecord): Promise<SourceRecord> {
    const access = await this.access(principal);
    if (!access.restricted) return source;
    const names = lakeTableNames(source);
    return {
      ...source,
      tables: source.tables.filter((t) =>
        access.canRead(source.lakeSchema, names.get(`${t.schema}.${t.name}`) as string),
      ),
    };
  }

  /**
   * A listed source as the principal may see it: its table counts, for a principal restricted by table permissions,
   * are of the tables it may read (read from the source's configuration, which only such a principal needs).
   */
  async summary(principal: Principal, summary: SourceSummary): Promise<SourceSummary> {
    const access = await this.access(principal);
    if (!access.restricted) return summary;
    const source = await this.sources.getIncludingDeleted(summary.id);
    const visible = source ? (await this.source(principal, source)).tables : [];
    return { ...summary, tableCount: visible.length, enabledTableCount: visible.filter((t) => t.enabled).length };
  }

  /** A sync as the principal may see it: only the tables it may read, counted alone; null stays null. */
  async sync(principal: Principal, sync: SyncView | null): Promise<SyncView | null> {
    const access = await this.access(principal);
    if (!access.restricted || sync === null) return sync;
    const shown = await Promise.all(sync.tables.map((t) => this.mentionVisible(access, sync.sourceId, t)));
    const tables = sync.tables.filter((_, i) => shown[i]);
    const error = sync.error?.code === 'tables_failed' ? { ...sync.error, message: HIDDEN_REASON } : sync.error;
    return { ...sync, tables, rows: committedRows(tables), error };
  }

  /** One event of a sync's stream as the principal may see it; undefined to leave it out. */
  async syncEvent(
    principal: Principal,
    sourceId: string | undefined,
    type: string,
    data: Record<string, unknown>,
  ): Promise<Record<string, unknown> | undefined> {
    const access = await this.access(principal);
    if (!access.restricted || sourceId === undefined) return data;
    if (type.startsWith('sync.') && !(await this.mentionVisible(access, sourceId, data))) return undefined;
    // A final event carries the job's error, whose tables_failed message names every failed table.
    const error = data.error as { code?: unknown } | undefined;
    if (error?.code === 'tables_failed') return { ...data, error: { ...error, message: HIDDEN_REASON } };
    return data;
  }

  /** A job's failure as the principal may see it (a sync's names its tables). */
  async jobError(
    principal: Principal,
    error: { code: string; message: string | null } | null,
  ): Promise<{ code: string; message: string | null } | null> {
    if (!error || error.code !== 'tables_failed' || !(await this.access(principal)).restricted) return error;
    return { ...error, message: HIDDEN_REASON };
  }

  /** Log entries about tables the principal may not read are left out. */
  async logEntries<T extends { sourceId: string; table: string | null }>(
    principal: Principal,
    entries: readonly T[],
  ): Promise<T[]> {
    const access = await this.access(principal);
    if (!access.restricted) return [...entries];
    const shown = await Promise.all(
      entries.map(
        async (entry) =>
          entry.table === null || (await this.mentionVisible(access, entry.sourceId, { table: entry.table })),
      ),
    );
    return entries.filter((_, i) => shown[i]);
  }

  /** Whether the principal may see a send: only if it may read what the send's SQL names. */
  async sendVisible(principal: Principal, send: SendRecord): Promise<boolean> {
    return !(await this.access(principal)).restricted || (await this.queries.mayRead(principal, send.sql));
  }

  /** The canvas with only the elements whose tables the principal may read. */
  async canvas(principal: Principal, canvas: Canvas): Promise<Canvas> {
    if (!(await this.access(principal)).restricted) return canvas;
    const readable = await Promise.all(
      canvas.elements.map((e) => this.queries.mayRead(principal, e.sql ?? `SELECT * FROM lake.${e.table as string}`)),
    );
    return { ...canvas, elements: canvas.elements.filter((_, i) => readable[i]) };
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
