import type { Directory } from '../auth/directory.js';
import { assertCreatorOrOwner, principalIdOf } from '../auth/ownership.js';
import type { Principal } from '../auth/principal.js';
import { quoteIdentifier } from '../engine/duckdb.js';
import { guardSql } from '../engine/sql-guard.js';
import { LakeServiceError } from '../core/errors.js';
import { DEFAULT_OBJECT_LIMITS, objectLimitReached } from '../limits/object-limits.js';
import { newId } from '../core/ids.js';
import { splitQualifiedName } from '../storage/names.js';
import type { JsonValue } from '../engine/json-values.js';
import type { QueryService } from '../queries/query-service.js';
import type { QueryResults } from '../queries/query-results.js';
import type { Canvas, CanvasElement, CanvasStore } from './canvas-store.js';
import type { SavedReads } from '../queries/saved-reads.js';

export interface TableData {
  canvas: Canvas;
  element: CanvasElement;
  columns: { name: string; type: string }[];
  rows: Record<string, JsonValue>[];
  rowCount: number;
}

/**
 * The most table elements a canvas holds. Each is a saved query judged for every restricted caller who looks at the
 * canvas; without a bound, one member's canvas of thousands cost the server seconds at each look.
 */
export const MAX_CANVAS_ELEMENTS = 100;

/**
 * The most characters of SQL a canvas's elements hold in all, as one query may: every list of canvases carries them,
 * and a page of 100 canvases of 100 queries of 100,000 characters would have been a gigabyte.
 */
export const MAX_CANVAS_SQL = 100_000;

/** POST /data/table returns at most this many rows of an element's table; `truncated` says when there were more. */
export const MAX_TABLE_ROWS = 10_000;

/** The query an element's table is: its saved SQL, or the whole lake table it names. */
const elementSql = (element: { sql: string | null; table: string | null }): string =>
  element.sql ?? `SELECT * FROM lake.${(element.table as string).split('.').map(quoteIdentifier).join('.')}`;

function checkName(value: string, param: string): string {
  if (value.trim() === '' || value.length > 200)
    throw new LakeServiceError('parameter_invalid', `${param} must be a name of 1 to 200 characters.`, { param });
  return value.trim();
}

/** A table of a canvas as asked for: a saved query (sql) or a lake table (`schema.table`), one of the two. */
export interface ElementInput {
  name: string;
  sql?: string;
  table?: string;
}

export interface CanvasInput {
  name: string;
  elements: readonly ElementInput[];
}

/**
 * Canvases: named boards whose table elements are saved SQL queries or lake table references. Their tables are
 * what a team API key may read through the legacy POST /data/table, run as any query is, in the sandbox.
 */
export class CanvasService {
  constructor(
    private readonly store: CanvasStore,
    private readonly queries: QueryService,
    private readonly results: QueryResults,
    private readonly directory: Directory,
    /** How many canvases an organization keeps (LAKE_ORG_MAX_CANVASES). */
    private readonly maxCanvases: number = DEFAULT_OBJECT_LIMITS.canvases,
  ) {}

  async create(principal: Principal, input: CanvasInput): Promise<Canvas> {
    const name = checkName(input.name, 'name');
    if (input.elements.length > MAX_CANVAS_ELEMENTS)
      throw new LakeServiceError(
        'parameter_invalid',
        `A canvas holds at most ${MAX_CANVAS_ELEMENTS} table elements; this one names ${input.elements.length}.`,
        { param: 'elements' },
      );
    const characters = input.elements.reduce((sum, e) => sum + (e.sql?.length ?? 0), 0);
    if (characters > MAX_CANVAS_SQL)
      throw new LakeServiceError(
        'parameter_invalid',
        `A canvas's queries hold at most ${MAX_CANVAS_SQL.toLocaleString('en-US')} characters of SQL in all; these hold ${characters.toLocaleString('en-US')}.`,
        { param: 'elements' },
      );
    const checked = [];
    for (const [i, e] of input.elements.entries()) {
      const element = this.checkElement(e, `elements[${i}]`);
      checked.push({ ...element, reads: await this.assertAdderMayRead(principal, element) });
    }
    const id = newId('cnv');
    const full = await this.store.create(
      { id, organizationId: principal.organizationId, name, createdBy: principalIdOf(principal), elements: checked },
      this.maxCanvases,
    );
    if (full) throw objectLimitReached('canvases', full.full, this.maxCanvases);
    return this.get(principal, id);
  }

  /** Deletes a canvas and its elements: only its creator or an owner may. What its tables read stays in the lake. */
  async delete(principal: Principal, canvasId: string): Promise<void> {
    const canvas = await this.find(principal, canvasId);
    await assertCreatorOrOwner(this.directory, principal, canvas.createdBy, `canvas ${canvas.id}`);
    await this.store.delete(canvas.id);
  }

  /**
   * Adds a table to a canvas: only its creator or an owner may, and only a table the adder may read, since a canvas
   * table is read by everyone the canvas is shown to (the team key reads them all).
   */
  async addElement(principal: Principal, canvasId: string, input: ElementInput): Promise<CanvasElement> {
    const canvas = await this.find(principal, canvasId);
    await assertCreatorOrOwner(this.directory, principal, canvas.createdBy, `canvas ${canvas.id}`);
    const element = this.checkElement(input, '');
    const reads = await this.assertAdderMayRead(principal, element);
    const added = await this.store.addElement(
      canvas.id,
      { ...element, reads },
      { elements: MAX_CANVAS_ELEMENTS, sqlCharacters: MAX_CANVAS_SQL },
    );
    if ('full' in added)
      throw new LakeServiceError(
        'canvas_full',
        added.full === 'elements'
          ? `Canvas ${canvas.id} holds ${MAX_CANVAS_ELEMENTS} table elements, the most a canvas may; make another canvas for more.`
          : `Canvas ${canvas.id} would hold more than ${MAX_CANVAS_SQL.toLocaleString('en-US')} characters of SQL in all with this query, the most a canvas may; make another canvas for it.`,
      );
    const id = added.id;
    return (await this.get(principal, canvasId)).elements.find((e) => e.id === id) as CanvasElement;
  }

  /** The canvas as the caller may see it: a restricted credential, only the elements whose tables it may read. */
  async get(principal: Principal, id: string): Promise<Canvas> {
    const canvas = await this.find(principal, id);
    const readable = await this.queries.mayReadEach(
      principal,
      canvas.elements.map((e) => ({ sql: elementSql(e), reads: e.reads })),
    );
    return { ...canvas, elements: canvas.elements.filter((_, i) => readable[i]) };
  }

  private async find(principal: Principal, id: string): Promise<Canvas> {
    const canvas = await this.store.get(principal.organizationId, id);
    if (!canvas)
      throw new LakeServiceError('canvas_not_found', `No canvas '${id.slice(0, 64)}' exists in your organization.`);
    return canvas;
  }

  async list(
    principal: Principal,
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: Canvas[]; hasMore: boolean }> {
    if (startingAfter !== undefined) await this.find(principal, startingAfter);
    const page = await this.store.pageIds(principal.organizationId, limit, startingAfter);
    return { data: await Promise.all(page.ids.map((id) => this.get(principal, id))), hasMore: page.hasMore };
  }

  /**
   * Runs one element's table, as a query of the caller (a team key reads every canvas table of its team), and
   * returns up to MAX_TABLE_ROWS rows as exact JSON.
   */
  async tableData(principal: Principal, canvasId: string, elementId: string): Promise<TableData> {
    const canvas = await this.find(principal, canvasId);
    const element = canvas.elements.find((e) => e.id === elementId);
    if (!element)
      throw new LakeServiceError(
        'element_not_found',
        `Canvas ${canvasId} has no table element '${elementId.slice(0, 64)}'.`,
      );
    const sql = elementSql(element);
    const { query } = await this.queries.submit(principal, { sql }, undefined);
    await this.queries.waitFor(query.id, this.queries.settings.timeoutMs + 5000);
    const done = await this.queries.get(principal, query.id);
    // Still queued or running after a query's whole time limit: the caller has stopped waiting, so the query stops too.
    if (done.status === 'queued' || done.status === 'running') await this.queries.stop(query.id, 'cancelled');
    if (done.status !== 'succeeded' || !this.results.file(done)) {
      throw new LakeServiceError(
        'element_query_failed',
        `The element's table could not be read: ${done.errorMessage ?? done.status}.`,
      );
    }
    const page = await this.results.page(done, 0, MAX_TABLE_ROWS);
    return {
      canvas,
      element,
      columns: done.columns ?? [],
      rows: page.rows,
      rowCount: done.rowCount ?? page.rows.length,
    };
  }

  /** `at` is where the element sits in the request (`elements[0]`), empty for one given alone. */
  private checkElement(element: ElementInput, at: string): { name: string; sql: string | null; table: string | null } {
    const param = (field: string): string => (at ? `${at}.${field}` : field);
    const name = checkName(element.name, param('name'));
    if ((element.sql === undefined) === (element.table === undefined)) {
      throw new LakeServiceError(
        'parameter_invalid',
        `${at || 'An element'} takes either sql (a saved query) or table (schema.table).`,
        { param: at || 'sql' },
      );
    }
    if (element.sql !== undefined) {
      guardSql(element.sql);
      return { name, sql: element.sql, table: null };
    }
    const { schema, name: table } = splitQualifiedName(element.table as string, param('table'));
    return { name, sql: null, table: `${schema}.${table}` };
  }

  /** Refuses an element its adder may not read; what it reads, kept with it. */
  private assertAdderMayRead(
    principal: Principal,
    element: { sql: string | null; table: string | null },
  ): Promise<SavedReads | null> {
    return this.queries.assertMayRead(principal, elementSql(element));
  }
}
