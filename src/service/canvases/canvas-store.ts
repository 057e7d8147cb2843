import { newId } from '../core/ids.js';
import { lock, type MetadataDb } from '../store/metadata-db.js';
import { withCount } from '../store/counted.js';
import { savedReadsOf, savedReadsText, type SavedReads } from '../queries/saved-reads.js';

export interface CanvasElement {
  id: string;
  name: string;
  kind: 'query' | 'table';
  sql: string | null;
  table: string | null;
  created: number;
  /** What its query reads, as kept when it was added (undefined: not known). */
  reads?: SavedReads;
}

export interface Canvas {
  id: string;
  organizationId: string;
  name: string;
  /** Who made it (a user, or an organization key); null for canvases older than this record. */
  createdBy: string | null;
  created: number;
  updated: number;
  elements: CanvasElement[];
}

export interface NewElement {
  name: string;
  sql: string | null;
  table: string | null;
  reads: SavedReads | null;
}

interface CanvasRow {
  id: string;
  organization_id: string;
  name: string;
  created_by: string | null;
  created: number;
  updated: number;
}

interface ElementRow {
  id: string;
  name: string;
  kind: 'query' | 'table';
  sql: string | null;
  table_ref: string | null;
  created: number;
  reads: string | null;
}

const seconds = (): number => Math.floor(Date.now() / 1000);

/** Canvases and their elements, in the order they were added. */
export class CanvasStore {
  constructor(private readonly db: MetadataDb) {}

  /**
   * The canvas with its first elements, in one transaction: it never exists without them. Nothing is made when the
   * organization already keeps `most` canvases (counted under a lock of their own, so two requests cannot both take
   * the last place): then the number it keeps.
   */
  async create(
    input: {
      id: string;
      organizationId: string;
      name: string;
      createdBy: string;
      elements: readonly NewElement[];
    },
    most: number,
  ): Promise<{ full: number } | undefined> {
    const counted = 'SELECT count(*) AS n FROM canvases WHERE organization_id = ?';
    return withCount(
      this.db,
      lock.objectLimit(input.organizationId, 'canvases'),
      counted,
      [input.organizationId],
      async (kept) => {
        if (kept >= most) return { full: kept };
        await this.db.run(
          'INSERT INTO canvases (id, organization_id, name, created_by, created, updated) VALUES (?, ?, ?, ?, ?, ?)',
          [input.id, input.organizationId, input.name, input.createdBy, seconds(), seconds()],
        );
        // The service bounds what a new canvas names (MAX_CANVAS_ELEMENTS, MAX_CANVAS_SQL).
        const unbounded = { elements: Number.MAX_SAFE_INTEGER, sqlCharacters: Number.MAX_SAFE_INTEGER };
        for (const element of input.elements) await this.addElement(input.id, element, unbounded);
        return undefined;
      },
    );
  }

  /** The canvas and its elements. */
  async delete(id: string): Promise<void> {
    await this.db.transaction(lock.canvas(id), async () => {
      await this.db.run('DELETE FROM canvas_elements WHERE canvas_id = ?', [id]);
      await this.db.run('DELETE FROM canvases WHERE id = ?', [id]);
    });
  }

  /**
   * Adds an element after the canvas's last one (under the canvas's lock, so two never share a place): its id, or
   * which bound it would pass (nothing added): the number of elements, or the characters of their SQL in all.
   */
  async addElement(
    canvasId: string,
    element: NewElement,
    most: { elements: number; sqlCharacters: number },
  ): Promise<{ id: string } | { full: 'elements' | 'sqlCharacters' }> {
    const id = newId('el');
    return this.db.transaction(lock.canvas(canvasId), async () => {
      const held = await this.db.get<{ n: number; characters: number | null }>(
        'SELECT count(*) AS n, sum(length(sql)) AS characters FROM canvas_elements WHERE canvas_id = ?',
        [canvasId],
      );
      if (Number(held?.n ?? 0) >= most.elements) return { full: 'elements' as const };
      if (Number(held?.characters ?? 0) + (element.sql?.length ?? 0) > most.sqlCharacters)
        return { full: 'sqlCharacters' as const };
      await this.db.run(
        `INSERT INTO canvas_elements (id, canvas_id, name, kind, sql, table_ref, created, reads, position)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, (SELECT coalesce(max(position), 0) + 1 FROM canvas_elements WHERE canvas_id = ?))`,
        [
          id,
          canvasId,
          element.name,
          element.sql === null ? 'table' : 'query',
          element.sql,
          element.table,
          seconds(),
          savedReadsText(element.reads),
          canvasId,
        ],
      );
      await this.db.run('UPDATE canvases SET updated = ? WHERE id = ?', [seconds(), canvasId]);
      return { id };
    });
  }

  async get(organizationId: string, id: string): Promise<Canvas | undefined> {
    const row = await this.db.get<CanvasRow>('SELECT * FROM canvases WHERE id = ? AND organization_id = ?', [
      id,
      organizationId,
    ]);
    if (!row) return undefined;
    const elements = await this.db.all<ElementRow>(
      'SELECT * FROM canvas_elements WHERE canvas_id = ? ORDER BY position, created',
      [row.id],
    );
    return {
      id: row.id,
      organizationId: row.organization_id,
      name: row.name,
      createdBy: row.created_by,
      created: row.created,
      updated: row.updated,
      elements: elements.map((e) => ({
        id: e.id,
        name: e.name,
        kind: e.kind,
        sql: e.sql,
        table: e.table_ref,
        created: e.created,
        ...(savedReadsOf(e.reads) ? { reads: savedReadsOf(e.reads) } : {}),
      })),
    };
  }

  /** One page of the organization's canvas ids, newest id first. */
  async pageIds(
    organizationId: string,
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ ids: string[]; hasMore: boolean }> {
    const rows = await this.db.all<{ id: string }>(
      'SELECT id FROM canvases WHERE organization_id = ? AND (CAST(? AS TEXT) IS NULL OR id < ?) ORDER BY id DESC LIMIT ?',
      [organizationId, startingAfter ?? null, startingAfter ?? null, limit + 1],
    );
    return { ids: rows.slice(0, limit).map((r) => r.id), hasMore: rows.length > limit };
  }
}
