import { dirname } from 'node:path';
import type { TableAccess } from '../auth/permissions.js';
import type { QueryJob } from '../engine/query-engine.js';
import type { Lake } from '../storage/lake.js';
import type { QuerySettings } from './settings.js';
import type { QueryPlan } from './store.js';

/**
 * The engine's job for a query: what it reads (the catalog version and the folders of its files, recorded as the
 * query's plan so no file it reads is collected) and the limits it runs under. Built from a plan, it is the same
 * job on whichever replica runs the query.
 */
export class QueryJobs {
  constructor(
    private readonly lake: Lake,
    private readonly settings: QuerySettings,
  ) {}

  /** The job of a new query, and its plan, for what the caller may read now. */
  async forNew(
    id: string,
    organizationId: string,
    access: TableAccess,
    statement: string,
  ): Promise<QueryJob & { plan: QueryPlan }> {
    const { file, tables, version } = await this.lake.catalogFile(organizationId, access);
    const { layout } = this.lake;
    // A layered snapshot reads files of earlier snapshots too: every folder its files are in.
    const readableDirs = access.restricted
      ? [...new Set(tables.flatMap((t) => t.snapshot.files.map((f) => dirname(layout.toAbsolute(f)))))]
      : [layout.tablesDir(organizationId)];
    const plan: QueryPlan = {
      catalogVersion: version,
      catalogFile: layout.toRelative(file),
      readableDirs: readableDirs.map((dir) => layout.toRelative(dir)),
    };
    return { ...this.fromPlan(id, organizationId, statement, plan), plan };
  }

  /** The job from a recorded plan: how this process runs a query, whichever replica accepted it. */
  fromPlan(id: string, organizationId: string, statement: string, plan: QueryPlan): QueryJob {
    const { layout } = this.lake;
    return {
      queryId: id,
      statement,
      catalogFile: layout.toAbsolute(plan.catalogFile),
      readableDirs: plan.readableDirs.map((dir) => layout.toAbsolute(dir)),
      resultDir: layout.resultDir(organizationId, id),
      writableDir: layout.resultsDir(organizationId),
      limits: {
        timeoutMs: this.settings.timeoutMs,
        memoryLimit: this.settings.memoryLimit,
        threads: this.settings.threads,
        // Set again when the query starts, from the storage its organization has left then.
        maxResultBytes: this.settings.maxResultBytes,
        resultLimitCode: 'result_too_large',
      },
    };
  }

  /** Engine messages help, but must not show where the lake lives on disk. */
  cleanMessage(message: string): string {
    return message.split(this.lake.layout.homeRoot).join('<lake>').trim();
  }
}
