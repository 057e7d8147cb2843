import type { TableReference } from '../engine/table-refs.js';

/**
 * What saved SQL (a canvas element's, a send's) reads, kept beside it when it is saved: the tables it names, by
 * DuckDB's parse, and whether it lists tables through SQL. A restricted caller's look at it is then judged against
 * its grants without the SQL's guard or parse, which cost the server a fraction of a millisecond per saved query and
 * seconds for a page of canvases.
 */
export interface SavedReads {
  tables: TableReference[];
  introspects: boolean;
}

/** As stored: JSON, the tables as [catalog, schema, table]. */
export function savedReadsText(reads: SavedReads | null): string | null {
  return reads && JSON.stringify({ t: reads.tables.map((r) => [r.catalog, r.schema, r.table]), i: reads.introspects });
}

/** What a stored text says; undefined when there is none or it is not one (the SQL is then judged afresh). */
export function savedReadsOf(text: string | null | undefined): SavedReads | undefined {
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as { t?: unknown; i?: unknown };
    if (!Array.isArray(parsed.t) || typeof parsed.i !== 'boolean') return undefined;
    const tables = parsed.t.map((entry: unknown) => {
      if (!Array.isArray(entry) || entry.length !== 3 || !entry.every((part) => typeof part === 'string'))
        throw new Error('not a table reference');
      const [catalog, schema, table] = entry as [string, string, string];
      return { catalog, schema, table };
    });
    return { tables, introspects: parsed.i };
  } catch {
    return undefined;
  }
}
