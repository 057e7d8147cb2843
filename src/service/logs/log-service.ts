import type { Principal } from '../auth/principal.js';
import { LakeServiceError } from '../core/errors.js';
import { positionAfter } from '../core/page-cursor.js';
import type { LogEntry, LogFilter, LogStore } from './log-store.js';

/** Source errors and schema changes that syncs record, newest first, filtered and paged. */
export class LogService {
  constructor(
    private readonly store: LogStore,
    /** The entries a caller may see (a restricted credential: none about tables it may not read). */
    private readonly visible: (principal: Principal, entries: LogEntry[]) => Promise<LogEntry[]> = async (_p, e) => e,
  ) {}

  async list(
    principal: Principal,
    filter: LogFilter,
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: LogEntry[]; hasMore: boolean }> {
    if (filter.kind !== undefined && !['error', 'schema_change', 'warning'].includes(filter.kind)) {
      throw new LakeServiceError('parameter_invalid', 'kind must be error, schema_change or warning.', {
        param: 'kind',
      });
    }
    const after = await positionAfter(startingAfter, (id) => this.store.position(principal.organizationId, id), 'logs');
    const page = await this.store.page(principal.organizationId, filter, limit, after);
    return { data: await this.visible(principal, page.data), hasMore: page.hasMore };
  }
}
