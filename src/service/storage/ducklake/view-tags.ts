/** What lake knows of a view beyond its SQL, kept as the view's DuckLake tags (other readers may ignore them). */

export const REFERENCES_TAG = 'lake.references';
export const COLUMNS_TAG = 'lake.columns';

export interface ViewColumn {
  name: string;
  type: string;
  nullable: boolean;
}

/** A view's tags: the tables and views its SQL names, and its columns as DuckDB last bound them. */
export function viewTags(
  references: readonly { schema: string; name: string }[],
  columns: readonly ViewColumn[],
): Record<string, string> {
  return {
    [REFERENCES_TAG]: JSON.stringify(references.map((r) => ({ schema: r.schema, name: r.name }))),
    [COLUMNS_TAG]: JSON.stringify(columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable }))),
  };
}

/** Reads back viewTags' values; a view another tool made has none, and names nothing lake knows of. */
export function fromViewTags(tags: Readonly<Record<string, string>>): {
  references: { schema: string; name: string }[];
  columns: ViewColumn[];
} {
  const parse = <T>(value: string | undefined): T[] => {
    try {
      return value ? (JSON.parse(value) as T[]) : [];
    } catch {
      // A tag another writer set: lake knows nothing of the view's parts.
      return [];
    }
  };
  return { references: parse(tags[REFERENCES_TAG]), columns: parse(tags[COLUMNS_TAG]) };
}
