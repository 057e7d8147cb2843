import type { Principal } from '../auth/principal.js';
import { assertNoIntrospection } from '../auth/introspection.js';
import type { PermissionStore, TableAccess } from '../auth/permissions.js';
import type { QueryEngine } from '../engine/query-engine.js';
import { guardSql } from '../engine/sql-guard.js';
import type { TableReference } from '../engine/table-refs.js';
import { LakeServiceError, isProgrammingError } from '../core/errors.js';
import type { Lake } from '../storage/lake.js';
import type { QueryJobs } from './query-jobs.js';
import type { SavedReads } from './saved-reads.js';

/** Parses of saved SQL kept (by its text): a canvas holds at most 100 elements, a page of sends 100. */
const PARSED_KEPT = 2000;
const PARSED_KEPT_CHARACTERS = 4_000_000;

/** What a query may read: every table or view it names must be one the caller's grants cover. */
export class QueryGrants {
  private readonly parsed = new Map<string, readonly TableReference[]>();
  private parsedLength = 0;

  constructor(
    private readonly lake: Lake,
    private readonly permissions: PermissionStore,
    private readonly engine: QueryEngine,
    private readonly jobs: QueryJobs,
  ) {}

  /**
   * Refuses SQL the principal could not run as a query (its guard, its introspection rule, its table grants), with
   * the query's own codes: for what is saved to run later as that principal, or shown to it. Answers what the SQL
   * reads, to be saved beside it (null: SQL an unrestricted principal saved that DuckDB does not parse), so that later
   * looks at it (mayReadEach) need neither its guard nor its parse.
   */
  async assertMayRead(principal: Principal, sql: string): Promise<SavedReads | null> {
    const guarded = guardSql(sql);
    const access = await this.permissions.accessFor(principal);
    if (!access.restricted) return this.readsOf(guarded).catch(() => null);
    // Refused with the introspection rule's own message before anything is parsed.
    assertNoIntrospection(guarded.tokens);
    const reads = await this.readsOf(guarded);
    await this.assertReadable(principal.organizationId, access, reads.tables);
    return reads;
  }

  /** What SQL that passed the guard reads: its tables by DuckDB's parse, and whether it lists tables. */
  private async readsOf({ statement, tokens }: ReturnType<typeof guardSql>): Promise<SavedReads> {
    const introspects = (() => {
      try {
        assertNoIntrospection(tokens);
        return false;
      } catch {
        return true;
      }
    })();
    // A parse alone: nothing here runs, so no session catalog or sandbox is made for it (a canvas of many saved
    // queries, shown to a restricted caller, made one of each per element: seconds of the server per request).
    try {
      return { tables: [...(await this.referencesOf(statement))], introspects };
    } catch (error) {
      // An error of lake's own code is no parse error of the caller's: a 500, logged with its stack.
      if (error instanceof LakeServiceError || isProgrammingError(error)) throw error;
      throw new LakeServiceError(
        'parameter_invalid',
        `The SQL does not parse: ${this.jobs.cleanMessage(error instanceof Error ? error.message : String(error))}`,
        { param: 'sql' },
      );
    }
  }

  /**
   * The tables a statement names, by DuckDB's parse; the same saved SQL (a canvas element, a send) is judged at every
   * look at it, and its parse does not change: the latest parses are kept, up to PARSED_KEPT and their text's length.
   */
  private async referencesOf(statement: string): Promise<readonly TableReference[]> {
    const kept = this.parsed.get(statement);
    if (kept) {
      this.parsed.delete(statement);
      this.parsed.set(statement, kept);
      return kept;
    }
    const references = await this.engine.parse(statement);
    // Two looks at once may both have parsed it: counted once.
    if (!this.parsed.has(statement)) this.parsedLength += statement.length;
    this.parsed.set(statement, references);
    // Bounded by count and by text: a statement may be 100,000 characters.
    while (this.parsed.size > PARSED_KEPT || this.parsedLength > PARSED_KEPT_CHARACTERS) {
      const oldest = this.parsed.keys().next().value as string;
      this.parsed.delete(oldest);
      this.parsedLength -= oldest.length;
    }
    return references;
  }

  /**
   * Whether the principal may see what names this SQL (a send, a canvas element): an unrestricted credential sees
   * everything of its organization, even SQL that no longer runs; a restricted one, what it could run (assertMayRead).
   */
  async mayRead(principal: Principal, sql: string, reads?: SavedReads | null): Promise<boolean> {
    return (await this.mayReadEach(principal, [{ sql, reads }]))[0] === true;
  }

  /**
   * mayRead for several saved queries at once (a canvas's elements, a page of sends), the grants looked up once. What
   * each reads is taken as it was saved; SQL saved before that was kept (reads undefined) is guarded and parsed.
   */
  async mayReadEach(
    principal: Principal,
    saved: readonly { sql: string; reads?: SavedReads | null | undefined }[],
  ): Promise<boolean[]> {
    const access = await this.permissions.accessFor(principal);
    if (!access.restricted) return saved.map(() => true);
    const visible = await this.visibleNames(principal.organizationId, access);
    return Promise.all(
      saved.map(async ({ sql, reads }) => {
        const known =
          reads ??
          (await Promise.resolve()
            .then(() => this.readsOf(guardSql(sql)))
            .catch(() => null));
        return known !== null && !known.introspects && known.tables.every((ref) => readableIn(visible, ref));
      }),
    );
  }

  /**
   * The schema a query names as its default, as the catalog spells it: one holding a table or view the caller may
   * read. Any other (missing, or only hidden tables) is refused alike, so the answer shows nothing hidden.
   */
  async schemaOf(organizationId: string, access: TableAccess, schema: string): Promise<string> {
    await this.lake.ensureDemo(organizationId);
    const { tables, views } = await this.lake.visible(organizationId, access);
    const found = [...tables, ...views].find((o) => o.schema.toLowerCase() === schema.toLowerCase());
    if (!found)
      throw new LakeServiceError(
        'parameter_invalid',
        `No schema '${schema.slice(0, 64)}' you can read exists; lake catalog ls lists the schemas.`,
        { param: 'schema' },
      );
    return found.schema;
  }

  /**
   * Every table or view a restricted query names must be one it may read, directly or (for views) through every
   * table underneath. The refusal names what the query named, never a hidden table underneath a view, and reads
   * the same whether the name is hidden or does not exist.
   */
  async assertReadable(
    organizationId: string,
    access: TableAccess,
    references: readonly TableReference[],
    /** The query's default schema: where a name without one resolves. */
    defaultSchema?: string,
  ): Promise<void> {
    const visible = await this.visibleNames(organizationId, access);
    const denied = references.find((ref) => !readableIn(visible, ref, defaultSchema));
    if (denied) {
      const written = [denied.catalog, denied.schema, denied.table].filter(Boolean).join('.');
      throw new LakeServiceError(
        'grant_table_denied',
        `This credential may not read ${written}. Ask an owner for a grant (lake admin grant).`,
      );
    }
  }

  /** The tables and views the access reads, as `schema NUL name` in lower case. */
  private async visibleNames(organizationId: string, access: TableAccess): Promise<ReadonlySet<string>> {
    // The demo tables are there before anything is judged against them (a query's catalog seeds them the same way).
    await this.lake.ensureDemo(organizationId);
    const { tables, views } = await this.lake.visible(organizationId, access);
    return new Set([...tables, ...views].map((o) => `${o.schema.toLowerCase()}\u0000${o.name.toLowerCase()}`));
  }
}

/** Whether a reference names a lake table or view among `visible`; a name without a schema is in `defaultSchema`. */
function readableIn(visible: ReadonlySet<string>, ref: TableReference, defaultSchema?: string): boolean {
  const inLake = ref.catalog === '' || ref.catalog.toLowerCase() === 'lake';
  const schema = ref.schema === '' && ref.catalog === '' ? (defaultSchema ?? '') : ref.schema;
  return inLake && schema !== '' && visible.has(`${schema.toLowerCase()}\u0000${ref.table.toLowerCase()}`);
}
