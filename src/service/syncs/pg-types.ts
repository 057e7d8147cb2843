import { quoteIdentifier } from '../engine/duckdb.js';

/**
 * How one PostgreSQL column travels without loss: an expression PostgreSQL writes as CSV text, the DuckDB type it
 * becomes, and the DuckDB expression that turns the text back into it (the staged CSV is read as text, so every
 * conversion is explicit and exact).
 */
export interface ColumnPlan {
  name: string;
  sourceType: string;
  /** PostgreSQL expression selected into the CSV. */
  select: string;
  /** DuckDB type of the lake column. */
  lakeType: string;
  /** The type DuckDB's CSV reader parses the staged column as: the lake type itself where its parse is exact. */
  csvType: string;
  /** DuckDB expression over the staged column `raw`. */
  load: (raw: string) => string;
}

const pgIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

const SCALARS: Record<string, string> = {
  smallint: 'SMALLINT',
  integer: 'INTEGER',
  bigint: 'BIGINT',
  real: 'FLOAT',
  'double precision': 'DOUBLE',
  boolean: 'BOOLEAN',
  text: 'VARCHAR',
  date: 'DATE',
  'timestamp without time zone': 'TIMESTAMP',
  'timestamp with time zone': 'TIMESTAMPTZ',
  'time without time zone': 'TIME',
  uuid: 'UUID',
};

/** The DuckDB type of one scalar PostgreSQL type, or undefined when it travels as exact text. */
function scalarLakeType(type: string): string | undefined {
  if (SCALARS[type]) return SCALARS[type];
  if (/^(character varying|character|varchar|char|bpchar)(\(\d+\))?$/.test(type)) return 'VARCHAR';
  if (/^timestamp\(\d\) without time zone$/.test(type)) return 'TIMESTAMP';
  if (/^timestamp\(\d\) with time zone$/.test(type)) return 'TIMESTAMPTZ';
  if (/^time\(\d\) without time zone$/.test(type)) return 'TIME';
  const numeric = /^numeric\((\d+),(\d+)\)$/.exec(type);
  // DuckDB's DECIMAL holds at most 38 digits; wider numbers stay exact as text.
  if (numeric && Number(numeric[1]) <= 38) return `DECIMAL(${numeric[1]},${numeric[2]})`;
  return undefined;
}

/** Plans one column. `isEnum` comes from the catalog: enum labels travel as text. */
export function planColumn(name: string, type: string, isEnum = false): ColumnPlan {
  const col = pgIdent(name);
  // COPY writes every column in its exact text form; a ::text cast would strip char(n) padding, so none is added.
  const text = { name, sourceType: type, select: col, lakeType: 'VARCHAR', csvType: 'VARCHAR', load: (raw: string) => raw };
  if (isEnum) return text;
  if (type === 'json' || type === 'jsonb') return { ...text, lakeType: 'JSON', load: (raw) => `CAST(${raw} AS JSON)` };
  if (type === 'bytea') return { ...text, select: `encode(${col}, 'hex')`, lakeType: 'BLOB', load: (raw) => `from_hex(${raw})` };
  // Parquet cannot store negative intervals, so intervals keep their exact ISO 8601 text (the session sets
  // IntervalStyle = iso_8601): the same form lake's JSON gives INTERVAL values.
  if (type === 'interval') return text;
  if (type.endsWith('[]')) {
    const element = scalarLakeType(type.slice(0, -2));
    // Arrays travel as JSON; element types DuckDB has become typed lists, others lists of exact text.
    const lakeType = `${element ?? 'VARCHAR'}[]`;
    const elementText = element === undefined || element.startsWith('DECIMAL') || element === 'UUID' || element.startsWith('TIME') || element === 'DATE';
    return {
      ...text,
      select: elementText ? `array_to_json(${col}::text[])::text` : `array_to_json(${col})::text`,
      lakeType,
      load: (raw) => (elementText && element ? `CAST(from_json(${raw}, '["VARCHAR"]') AS ${lakeType})` : `from_json(${raw}, '["${element ?? 'VARCHAR'}"]')`),
    };
  }
  const lakeType = scalarLakeType(type);
  if (!lakeType) return text;
  // Scalars are parsed by the CSV reader itself (faster than casting text afterwards, and just as exact).
  return { ...text, lakeType, csvType: lakeType, load: (raw) => raw };
}

/** DuckDB's name for a staged column. */
export const stagedName = (index: number): string => quoteIdentifier(`c${index}`);
