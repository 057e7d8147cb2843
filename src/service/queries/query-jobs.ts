import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { UNRESTRICTED } from '../auth/permissions.js';
import { tableNamesIn } from '../engine/table-names.js';
import type { TableAccess } from '../auth/permissions.js';
import type { QueryJob } from '../engine/query-engine.js';
import { AsOfError, findAsOf, mayHoldAsOf, messageAsWritten } from '../engine/as-of.js';
import { openPrivilegedConnection } from '../engine/duckdb.js';
import type { Lake } from '../storage/lake.js';
import type { QuerySettings } from './settings.js';
import type { QueryAsked, QueryPlan } from './store.js';

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
    /** What the query is asked with besides its SQL: its default schema, parameter values and limits. */
    asked: QueryAsked = {},
  ): Promise<QueryJob & { plan: QueryPlan; asOfError?: string }> {
    // Most statements read no table AT a version, and need no parse for it.
    const parser = mayHoldAsOf(statement) ? await openPrivilegedConnection({}) : undefined;
    try {
      let asOfError: string | undefined;
      const asOf = parser
        ? await findAsOf(parser.connection, statement, asked.schema).catch((error: unknown) => {
            // A version out of reach fails the query, as DuckDB would at bind time; the SQL is recorded as sent.
            if (!(error instanceof AsOfError)) throw error;
            asOfError = error.message;
            return undefined;
          })
        : undefined;
      // With an object store, the session's catalog reads only the tables the statement names (their files
      // fetched now: a store that is down is a 503 before anything is recorded).
      const reading = this.namesRead(statement);
      const catalog = await this.lake
        .catalogFile(organizationId, access, asOf?.references ?? [], reading)
        .catch(async (error: unknown) => {
          if (!(error instanceof AsOfError)) throw error;
          asOfError = error.message;
          return this.lake.catalogFile(organizationId, access, [], reading);
        });
      const { layout } = this.lake;
      // A merged table reads files of earlier writes too: every folder its files are in.
      const readableDirs = access.restricted
        ? [...new Set(catalog.tables.flatMap((t) => t.snapshot.files.map((f) => dirname(layout.toAbsolute(f)))))]
        : [layout.tablesDir(organizationId)];
      const rewritten =
        asOf && asOf.references.length > 0 && asOfError === undefined
          ? await asOf.rewrite((_ref, index) => catalog.asOf[index] as { schema: string; table: string })
          : undefined;
      const plan: QueryPlan = {
        // The oldest snapshot it reads: the collector keeps every snapshot from a live query's version on.
        catalogVersion: Math.min(catalog.version, ...catalog.asOf.map((v) => v.snapshot)),
        catalogFile: layout.toRelative(catalog.file),
        readableDirs: readableDirs.map((dir) => layout.toRelative(dir)),
        ...(layout.files.kind === 'object_store'
          ? {
              files: catalog.files,
              session: {
                snapshot: catalog.version,
                ...(catalog.visible ? { visible: catalog.visible } : {}),
                ...(asOf && asOf.references.length > 0 && asOfError === undefined ? { asOf: asOf.references } : {}),
                ...(reading ? { reading: [...reading] } : {}),
              },
            }
          : {}),
        ...(rewritten !== undefined ? { statement: rewritten } : {}),
        ...asked,
      };
      return {
        ...this.fromPlan(id, organizationId, statement, plan),
        plan,
        ...(asOfError !== undefined ? { asOfError } : {}),
      };
    } finally {
      parser?.close();
    }
  }

  /** The job from a recorded plan: how this process runs a query, whichever replica accepted it. */
  fromPlan(id: string, organizationId: string, statement: string, plan: QueryPlan): QueryJob {
    const { layout } = this.lake;
    return {
      queryId: id,
      // What runs: the statement as sent, or as rewritten to read the versions it names AT.
      statement: plan.statement ?? statement,
      catalogFile: layout.toAbsolute(plan.catalogFile),
      readableDirs: plan.readableDirs.map((dir) => layout.toAbsolute(dir)),
      ...(plan.files !== undefined ? { files: plan.files.map((file) => layout.toAbsolute(file)) } : {}),
      resultDir: layout.resultDir(organizationId, id),
      writableDir: layout.resultsDir(organizationId),
      ...(plan.schema !== undefined ? { schema: plan.schema } : {}),
      ...(plan.parameters !== undefined ? { parameters: plan.parameters } : {}),
      ...(plan.rowLimit !== undefined ? { rowLimit: plan.rowLimit } : {}),
      ...(plan.byteLimit !== undefined ? { byteLimit: plan.byteLimit } : {}),
      ...(plan.dryRun ? { dryRun: true } : {}),
      ...(plan.statement !== undefined ? { readsVersions: true } : {}),
      limits: {
        // A caller's own time limit only shortens the server's.
        timeoutMs: Math.min(this.settings.timeoutMs, (plan.timeoutSeconds ?? Number.POSITIVE_INFINITY) * 1000),
        memoryLimit: this.settings.memoryLimit,
        threads: this.settings.threads,
        // Set again when the query starts, from the storage its organization has left then.
        maxResultBytes: this.settings.maxResultBytes,
        resultLimitCode: 'result_too_large',
      },
    };
  }

  /** With an object store, the names the statement may read tables by; undefined (read them all) otherwise. */
  private namesRead(statement: string): Set<string> | undefined {
    return this.lake.layout.files.kind === 'local' ? undefined : tableNamesIn(statement);
  }

  /**
   * Makes sure the session catalog a recorded plan names is on this replica: with an object store each replica's
   * cache folder has its own, so one that runs a query another accepted builds it again, from what it was built from.
   */
  async ensureSession(organizationId: string, plan: QueryPlan): Promise<void> {
    const { layout } = this.lake;
    if (!plan.session || existsSync(layout.toAbsolute(plan.catalogFile))) return;
    const { snapshot, visible, asOf, reading } = plan.session;
    const names = new Set(visible);
    const access = visible
      ? { restricted: true, canRead: (schema: string, table: string) => names.has(`${schema}.${table}`.toLowerCase()) }
      : UNRESTRICTED;
    const built = await this.lake.catalogFile(
      organizationId,
      access,
      asOf ?? [],
      reading ? new Set(reading) : undefined,
      snapshot,
    );
    if (layout.toRelative(built.file) !== plan.catalogFile)
      throw new Error('Its catalog could not be built again as it was planned.');
  }

  /** Keeps the files a job reads on local disk (fetched into the cache first) until the release. */
  holdFiles(job: QueryJob): Promise<() => void> {
    return this.lake.layout.files.hold(job.files ?? []);
  }

  /** Engine messages help, but must not show where the lake lives on disk. */
  /** A message for the caller: no path of the home, and about the statement as sent (not as lake rewrote it). */
  cleanMessage(message: string, job?: QueryJob): string {
    return (job?.readsVersions ? messageAsWritten(message) : message)
      .split(this.lake.layout.homeRoot)
      .join('<lake>')
      .trim();
  }
}
