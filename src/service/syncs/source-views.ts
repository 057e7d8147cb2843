import type { Principal } from '../auth/principal.js';
import type { SourceChange, SourceCreation, SourceService } from '../sources/source-service.js';
import type { SourceRecord, SourceSummary } from '../sources/source-store.js';
import type { SyncService, SyncView } from './sync-service.js';

/** A source as its object shows it: with its latest sync, both as the caller may see them. */
export interface SourceView {
  source: SourceRecord;
  latestSync: SyncView | null;
}

/** A listed source: table counts instead of tables, with its latest sync. */
export interface SourceListItem {
  summary: SourceSummary;
  latestSync: SyncView | null;
}

/**
 * Sources with their latest syncs, for the source routes: the one place the two services meet (sources know
 * nothing of syncs; syncs read sources). Each part applies the caller's access itself.
 */
export class SourceViews {
  constructor(
    private readonly sources: SourceService,
    private readonly syncs: SyncService,
  ) {}

  async list(
    principal: Principal,
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: SourceListItem[]; hasMore: boolean }> {
    const page = await this.sources.list(principal, limit, startingAfter);
    const data = await Promise.all(
      page.data.map(async (summary) => ({ summary, latestSync: await this.syncs.latest(principal, summary.id) })),
    );
    return { data, hasMore: page.hasMore };
  }

  async get(principal: Principal, id: string): Promise<SourceView> {
    return this.withLatest(principal, await this.sources.get(principal, id));
  }

  async create(principal: Principal, input: SourceCreation): Promise<SourceView> {
    return { source: await this.sources.create(principal, input), latestSync: null };
  }

  async update(principal: Principal, id: string, change: SourceChange): Promise<SourceView> {
    return this.withLatest(principal, await this.sources.update(principal, id, change));
  }

  private async withLatest(principal: Principal, source: SourceRecord): Promise<SourceView> {
    return { source, latestSync: await this.syncs.latest(principal, source.id) };
  }
}
