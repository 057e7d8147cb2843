import type pg from 'pg';
import { listDepth, measuresNumeric, type NumericShape } from './pg-types.js';
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

/** What the rows a sync reads hold, for the columns whose lake type depends on their values. */
export interface ValueShapes {
  numeric: Map<string, NumericShape>;
  /** For array columns: the dimensions of their values; 0 when they differ, undefined when all are empty or NULL. */
  arrayDepths: Map<string, number | undefined>;
}

/**
 * For numeric columns without a declared precision or wider than 38 digits: the largest scale and integer digits of
 * the rows this sync reads (the same WHERE), and whether any is NaN or infinite; for array columns, how many
 * dimensions their values have. It costs one more scan of the table at the source, and lets such numerics be exact
 * DECIMALs (they compare and sum as numbers) wherever their values fit 38 digits, and arrays nested lists.
 */
export async function valueShapes(
  client: pg.Client,
  columns: readonly SourceColumn[],
  from: string,
  where: string,
): Promise<ValueShapes> {
  const numeric = columns.filter((c) => measuresNumeric(c.type));
  const arrays = columns.filter((c) => c.type.endsWith('[]'));
  const shapes: ValueShapes = { numeric: new Map(), arrayDepths: new Map() };
  if (numeric.length + arrays.length === 0) return shapes;
  const special = (col: string): string => `${col}::text IN ('NaN', 'Infinity', '-Infinity')`;
  const parts = [
    ...numeric.flatMap((c, i) => {
      const col = pgIdent(c.name);
      return [
        `max(scale(${col})) FILTER (WHERE NOT ${special(col)}) AS s${i}`,
        `max(length(trunc(abs(${col}))::text)) FILTER (WHERE NOT ${special(col)}) AS d${i}`,
        `count(*) FILTER (WHERE ${special(col)}) AS x${i}`,
      ];
    }),
    // array_ndims is NULL for an empty array, which fits any depth.
    ...arrays.flatMap((c, i) => [
      `min(array_ndims(${pgIdent(c.name)})) AS amin${i}`,
      `max(array_ndims(${pgIdent(c.name)})) AS amax${i}`,
    ]),
  ];
  const row =
    (await client.query<Record<string, string | number | null>>(`SELECT ${parts.join(', ')} FROM ${from}${where}`))
      .rows[0] ?? {};
  numeric.forEach((c, i) =>
    shapes.numeric.set(c.name, {
      scale: Number(row[`s${i}`] ?? 0),
      integerDigits: Number(row[`d${i}`] ?? 1),
      special: Number(row[`x${i}`] ?? 0) > 0,
    }),
  );
  arrays.forEach((c, i) => {
    const [least, most] = [row[`amin${i}`], row[`amax${i}`]];
    shapes.arrayDepths.set(c.name, most === null || most === undefined ? undefined : least === most ? Number(most) : 0);
  });
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
 * The shapes to type changed rows with when they merge into a table already typed (DECIMAL(38, s), BIGNUM or DOUBLE,
 * or text, for numerics; a list as deep as the values, or JSON, for arrays: planColumn): the table's own, so the merged
 * columns keep their ids and the table's earlier files keep reading. Undefined when a changed value does not fit the
 * table's type: the table is then read whole and typed again. `lakeTypes` is the table's column type by the source
 * column's name.
 */
export function shapesAsTable(
  changed: ValueShapes,
  lakeTypes: ReadonlyMap<string, string | undefined>,
): ValueShapes | undefined {
  const shapes: ValueShapes = { numeric: new Map(), arrayDepths: new Map() };
  for (const [name, shape] of changed.numeric) {
    const lakeType = lakeTypes.get(name);
    const decimal = lakeType ? /^DECIMAL\(38,\s*(\d+)\)$/.exec(lakeType) : null;
    if (lakeType === undefined) shapes.numeric.set(name, shape);
    else if (decimal) {
      const scale = Number(decimal[1]);
      if (shape.special || shape.scale > scale || shape.integerDigits > 38 - scale) return undefined;
      shapes.numeric.set(name, { scale, integerDigits: 38 - scale, special: false });
    } else if (lakeType === 'BIGNUM') {
      if (shape.special || shape.scale > 0) return undefined;
      shapes.numeric.set(name, { scale: 0, integerDigits: 39, special: false });
    } else shapes.numeric.set(name, { scale: 0, integerDigits: 0, special: true });
  }
  for (const [name, depth] of changed.arrayDepths) {
    const lakeType = lakeTypes.get(name);
    if (lakeType === undefined) {
      shapes.arrayDepths.set(name, depth);
      continue;
    }
    const tableDepth = listDepth(lakeType);
    // Changed values all empty or NULL fit any table; a table of mixed dimensions (JSON) takes any value.
    if (depth !== undefined && tableDepth !== 0 && depth !== tableDepth) return undefined;
    shapes.arrayDepths.set(name, tableDepth);
  }
  return shapes;
}
