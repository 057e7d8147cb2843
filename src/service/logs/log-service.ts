import type { Principal } from '../auth/principal.js';
import { LakeServiceError } from '../errors.js';
import type { MetadataDb } from '../store/metadata-db.js';

export interface LogEntry {
  id: string;
  sourceId: string;
  kind: 'error' | 'schema_change';
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

/** Source errors and schema changes that syncs record, newest first, filtered and paged. */
export class LogService {
  constructor(private readonly db: MetadataDb) {}

  async list(principal: Principal, filter: LogFilter, limit: number, startingAfter: string | undefined): Promise<{ data: LogEntry[]; hasMore: boolean }> {
    if (filter.kind !== undefined && filter.kind !== 'error' && filter.kind !== 'schema_change') {
      throw new LakeServiceError('parameter_invalid', 'kind must be error or schema_change.', { param: 'kind' });
    }
    let after: { created: number; id: string } | undefined;
    if (startingAfter !== undefined) {
      after = await this.db.get<typeof after>('SELECT created, id FROM source_logs WHERE id = ? AND organization_id = ?', [startingAfter, principal.organizationId]);
      if (!after) throw new LakeServiceError('invalid_cursor', 'starting_after is not a next_cursor from a previous page of logs.', { param: 'starting_after' });
    }
    const rows = await this.db.all<{ id: string; source_id: string; kind: 'error' | 'schema_change'; table_name: string | null; message: string; details: string; created: number }>(// A deleted source's entries go with it.
        `SELECT l.* FROM source_logs l JOIN sources s ON s.id = l.source_id AND s.deleted IS NULL WHERE l.organization_id = ?
           AND (? IS NULL OR source_id = ?) AND (? IS NULL OR kind = ?) AND (? IS NULL OR l.created >= ?)
           AND (? IS NULL OR l.created < ? OR (l.created = ? AND l.id < ?))
         ORDER BY l.created DESC, l.id DESC LIMIT ?`, [principal.organizationId,
        filter.source ?? null, filter.source ?? null,
        filter.kind ?? null, filter.kind ?? null,
        filter.since ?? null, filter.since ?? null,
        after?.id ?? null, after?.created ?? 0, after?.created ?? 0, after?.id ?? '',
        limit + 1,]);
    return {
      data: rows.slice(0, limit).map((r) => ({ id: r.id, sourceId: r.source_id, kind: r.kind, table: r.table_name, message: r.message, details: JSON.parse(r.details) as Record<string, unknown>, created: r.created })),
      hasMore: rows.length > limit,
    };
  }
}
