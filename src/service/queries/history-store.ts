import type { JobStatus } from '../jobs/job-store.js';
import type { MetadataDb } from '../store/metadata-db.js';
import { QUERY_SELECT, toQueryRecord, type QueryRecord, type QueryRow } from './store.js';

/** Which queries a history page shows. Every filter is optional; all given must hold. */
export interface QueryHistoryFilter {
  /** Only this principal's queries (the caller's own unless an owner or admin asks for others'). */
  principalId?: string;
  status?: JobStatus;
  /** Created at or after, and before, these times (epoch seconds). */
  createdAfter?: number;
  createdBefore?: number;
  /** A piece of the SQL, matched without regard to (ASCII) case. */
  text?: string;
  /** A tag the query was asked with. */
  tag?: string;
}

/** A LIKE pattern that matches `text` literally (with ESCAPE '\'), anywhere. */
const containing = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Query history: an organization's queries, newest first, filtered and paged by the last id of a page. */
export class QueryHistoryStore {
  constructor(private readonly db: MetadataDb) {}

  async list(
    organizationId: string,
    filter: QueryHistoryFilter,
    limit: number,
    after?: QueryRecord,
  ): Promise<{ data: QueryRecord[]; hasMore: boolean }> {
    const text = filter.text === undefined ? null : containing(filter.text.toLowerCase());
    const tag = filter.tag === undefined ? null : containing(JSON.stringify(filter.tag));
    const rows = await this.db.all<QueryRow>(
      `${QUERY_SELECT}
        WHERE j.organization_id = ? AND j.kind = 'query'
          AND (CAST(? AS TEXT) IS NULL OR j.principal_id = ?)
          AND (CAST(? AS TEXT) IS NULL OR j.status = ?)
          AND j.created >= ? AND j.created < ?
          AND (CAST(? AS TEXT) IS NULL OR lower(q.sql) LIKE ? ESCAPE '\\')
          AND (CAST(? AS TEXT) IS NULL OR q.tags LIKE ? ESCAPE '\\')
          AND (CAST(? AS TEXT) IS NULL OR j.created < ? OR (j.created = ? AND j.id < ?))
        ORDER BY j.created DESC, j.id DESC LIMIT ?`,
      [
        organizationId,
        filter.principalId ?? null,
        filter.principalId ?? null,
        filter.status ?? null,
        filter.status ?? null,
        filter.createdAfter ?? 0,
        filter.createdBefore ?? 2_147_483_647,
        text,
        text,
        tag,
        tag,
        after?.id ?? null,
        after?.created ?? 0,
        after?.created ?? 0,
        after?.id ?? '',
        limit + 1,
      ],
    );
    return { data: rows.slice(0, limit).map(toQueryRecord), hasMore: rows.length > limit };
  }
}
