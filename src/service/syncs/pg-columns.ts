import type pg from 'pg';
import type { NumericShape } from './pg-types.js';
import type { TableState } from './types.js';

/** A source table's columns as PostgreSQL describes them, and how they changed since the last sync. */
const pgIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

export interface SourceColumn {
  name: string;
  type: string;
  /** An enum's labels in their declared order; undefined for other types. */
  enumLabels: string[] | undefined;
  notNull: boolean;
}

export async function currentColumns(client: pg.Client, schema: string, table: string): Promise<SourceColumn[]> {
  const result = await client.query<{ name: string; type: string; enum_labels: string[] | null; not_null: boolean }>(
    // A domain travels as its base type (its checks were the source's business), so it keeps that type's semantics.
    `SELECT a.attname AS name,
            CASE WHEN t.typtype = 'd' THEN format_type(t.typbasetype, t.typtypmod) ELSE format_type(a.atttypid, a.atttypmod) END AS type,
            CASE WHEN coalesce(b.typtype, t.typtype) = 'e'
                 THEN (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = coalesce(b.oid, t.oid)) END AS enum_labels,
            a.attnotnull AS not_null
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_type t ON t.oid = a.atttypid
     LEFT JOIN pg_type b ON t.typtype = 'd' AND b.oid = t.typbasetype
     WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [schema, table],
  );
  return result.rows.map((r) => ({
    name: r.name,
    type: r.type,
    enumLabels: r.enum_labels ?? undefined,
    notNull: r.not_null,
  }));
}

/**
 * For numeric columns without a declared precision: the largest scale and integer digits of the rows this sync
 * reads (the same WHERE), and whether any is NaN or infinite. It costs one more scan of the table at the source,
 * and lets such columns be exact DECIMALs (they compare and sum as numbers) wherever their values fit 38 digits.
 */
export async function numericShapes(
  client: pg.Client,
  columns: readonly SourceColumn[],
  from: string,
  where: string,
): Promise<Map<string, NumericShape>> {
  const free = columns.filter((c) => c.type === 'numeric');
  const shapes = new Map<string, NumericShape>();
  if (free.length === 0) return shapes;
  const special = (col: string): string => `${col}::text IN ('NaN', 'Infinity', '-Infinity')`;
  const parts = free.flatMap((c, i) => {
    const col = pgIdent(c.name);
    return [
      `max(scale(${col})) FILTER (WHERE NOT ${special(col)}) AS s${i}`,
      `max(length(trunc(abs(${col}))::text)) FILTER (WHERE NOT ${special(col)}) AS d${i}`,
      `count(*) FILTER (WHERE ${special(col)}) AS x${i}`,
    ];
  });
  const row =
    (await client.query<Record<string, string | number | null>>(`SELECT ${parts.join(', ')} FROM ${from}${where}`))
      .rows[0] ?? {};
  free.forEach((c, i) =>
    shapes.set(c.name, {
      scale: Number(row[`s${i}`] ?? 0),
      integerDigits: Number(row[`d${i}`] ?? 1),
      special: Number(row[`x${i}`] ?? 0) > 0,
    }),
  );
  return shapes;
}

export function compareColumns(
  before: TableState['columns'],
  now: readonly { name: string; type: string }[],
): { added: string[]; dropped: string[]; retyped: string[] } {
  const old = new Map(before.map((c) => [c.name, c.type]));
  const current = new Map(now.map((c) => [c.name, c.type]));
  return {
    added: [...current.keys()].filter((n) => !old.has(n)),
    dropped: [...old.keys()].filter((n) => !current.has(n)),
    retyped: [...current].filter(([n, t]) => old.has(n) && old.get(n) !== t).map(([n]) => n),
  };
}

/**
 * The numeric shapes to type changed rows with when they merge into a table already typed (DECIMAL(38, s), or
 * text for NaN and infinities, planColumn): the table's own, so the merged columns keep their ids and the table's
 * earlier files keep reading. Undefined when a changed value does not fit the table's type: the table is then read
 * whole and typed again. `lakeTypes` is the table's column type by the source column's name.
 */
export function shapesAsTable(
  changed: ReadonlyMap<string, NumericShape>,
  lakeTypes: ReadonlyMap<string, string | undefined>,
): Map<string, NumericShape> | undefined {
  const shapes = new Map<string, NumericShape>();
  for (const [name, shape] of changed) {
    const lakeType = lakeTypes.get(name);
    const decimal = lakeType ? /^DECIMAL\(38,\s*(\d+)\)$/.exec(lakeType) : null;
    if (lakeType === undefined) shapes.set(name, shape);
    else if (decimal) {
      const scale = Number(decimal[1]);
      if (shape.special || shape.scale > scale || shape.integerDigits > 38 - scale) return undefined;
      shapes.set(name, { scale, integerDigits: 38 - scale, special: false });
    } else shapes.set(name, { scale: 0, integerDigits: 0, special: true });
  }
  return shapes;
}
