import type { MetadataDb } from '../store/metadata-db.js';

export interface LogEntry {
  id: string;
  sourceId: string;
  kind: 'error' | 'schema_change' | 'warning';
  table: string | null;
  message: string;
  details: Record<string, unknown>;
  created: number;
}

export interface LogFilter {
  source?: string;
  kind?: string;
  since?: number;
}

interface LogRow {
  id: string;
  source_id: string;
  kind: 'error' | 'schema_change' | 'warning';
  table_name: string | null;
  message: string;
  details: string;
  created: number;
}

/** Reads the source logs that syncs write (SyncStore.log). */
export class LogStore {
  constructor(private readonly db: MetadataDb) {}

  async position(organizationId: string, id: string): Promise<{ created: number; id: string } | undefined> {
    return this.db.get('SELECT created, id FROM source_logs WHERE id = ? AND organization_id = ?', [
      id,
      organizationId,
    ]);
  }

  /** Newest first, after `after`; a deleted source's entries go with it. */
  async page(
    organizationId: string,
    filter: LogFilter,
    limit: number,
    after: { created: number; id: string } | undefined,
  ): Promise<{ data: LogEntry[]; hasMore: boolean }> {
    const rows = await this.db.all<LogRow>(
      `SELECT l.* FROM source_logs l JOIN sources s ON s.id = l.source_id AND s.deleted IS NULL WHERE l.organization_id = ?
         AND (CAST(? AS TEXT) IS NULL OR source_id = ?) AND (CAST(? AS TEXT) IS NULL OR kind = ?) AND (CAST(? AS TEXT) IS NULL OR l.created >= ?)
         AND (CAST(? AS TEXT) IS NULL OR l.created < ? OR (l.created = ? AND l.id < ?))
       ORDER BY l.created DESC, l.id DESC LIMIT ?`,
      [
        organizationId,
        filter.source ?? null,
        filter.source ?? null,
        filter.kind ?? null,
        filter.kind ?? null,
        filter.since ?? null,
        filter.since ?? null,
        after?.id ?? null,
        after?.created ?? 0,
        after?.created ?? 0,
        after?.id ?? '',
        limit + 1,
      ],
    );
    return {
      data: rows.slice(0, limit).map((r) => ({
        id: r.id,
        sourceId: r.source_id,
        kind: r.kind,
        table: r.table_name,
        message: r.message,
        details: JSON.parse(r.details) as Record<string, unknown>,
        created: r.created,
      })),
      hasMore: rows.length > limit,
    };
  }
}
