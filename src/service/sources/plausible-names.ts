/**
 * The longest schema, table or column name lake takes from a source's catalog. PostgreSQL's names are at most 63
 * bytes and MySQL's 64 characters, so a longer one comes from a server that lies; kept, it would travel in the
 * source object, in every sync's record of its tables and in their events, each time the source is synced.
 */
export const MAX_SOURCE_NAME_CHARS = 256;

interface NamedTable {
  schema: string;
  name: string;
  columns: readonly { name: string }[];
}

/** The discovered tables whose names, and whose columns' names, fit MAX_SOURCE_NAME_CHARS; the rest are left out. */
export function withPlausibleNames<T extends NamedTable>(tables: readonly T[]): T[] {
  const fits = (name: string): boolean => name.length <= MAX_SOURCE_NAME_CHARS;
  return tables.filter((t) => fits(t.schema) && fits(t.name) && t.columns.every((c) => fits(c.name)));
}
