import { jsonSize, type JsonRow } from '../engine/result-rows.js';

/** What the first pages of recent results may hold in memory together, and how long one is kept. */
const MAX_BYTES = 32 * 2 ** 20;
const KEEP_MS = 10 * 60_000;

/**
 * The first rows of results that just succeeded, as the engine read them back while it still had the file open.
 * A client nearly always asks for the first page at once; served from here, it needs no engine of its own. Bounded
 * by bytes (oldest go first) and by age; a page that is not here is read from the file as every other page is.
 */
export class FirstPages {
  private readonly pages = new Map<string, { rows: JsonRow[]; bytes: number; expires: number }>();
  private bytes = 0;

  keep(queryId: string, rows: JsonRow[], now = Date.now()): void {
    const bytes = rows.reduce((sum, row) => sum + jsonSize(row), 0);
    if (rows.length === 0 || bytes > MAX_BYTES) return;
    this.drop(queryId);
    this.pages.set(queryId, { rows, bytes, expires: now + KEEP_MS });
    this.bytes += bytes;
    for (const [id, page] of this.pages) {
      if (this.bytes <= MAX_BYTES && page.expires > now) break;
      this.drop(id);
    }
  }

  /** Rows [0, limit) when they are all here; undefined otherwise (the caller reads the file). */
  rows(queryId: string, limit: number, rowCount: number, now = Date.now()): JsonRow[] | undefined {
    const page = this.pages.get(queryId);
    if (!page) return undefined;
    if (page.expires <= now) {
      this.drop(queryId);
      return undefined;
    }
    return page.rows.length >= Math.min(limit, rowCount) ? page.rows.slice(0, limit) : undefined;
  }

  drop(queryId: string): void {
    const page = this.pages.get(queryId);
    if (!page) return;
    this.bytes -= page.bytes;
    this.pages.delete(queryId);
  }
}
