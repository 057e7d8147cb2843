import { quoteIdentifier, quoteLiteral } from '../engine/duckdb.js';
import { intervalFromPartsSql } from '../storage/ducklake/types.js';

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

/** citext, wherever its extension lives (format_type qualifies it when that schema is not on the search path). */
const CITEXT = /^([a-z_][\w$]*\.|"([^"]|"")+"\.)?citext$/;

/** char(n) and bpchar: blank-padded types whose comparisons, lengths and casts to text ignore trailing blanks. */
const BLANK_PADDED = /^(character|char|bpchar)(\(\d+\))?$/;

/**
 * Dates and timestamps travel as whole days or microseconds since 1970, so dates before year 1 keep their era:
 * PostgreSQL writes them as '0044-03-15 BC', which text parsers take for 44 AD. Infinite values travel as the
 * largest and smallest numbers of the type. The numbers are parsed by DuckDB's CSV reader as integers, which is
 * as fast as its timestamp parser.
 */
const INFINITE = { date: ['2147483647', '-2147483647'], timestamp: ['9223372036854775807', '-9223372036854775807'] };

function epochPlan(
  col: string,
  kind: 'date' | 'timestamp' | 'timestamptz',
): Pick<ColumnPlan, 'select' | 'load' | 'csvType'> {
  const [top, bottom] = kind === 'date' ? INFINITE.date : INFINITE.timestamp;
  const finite = kind === 'date' ? `${col} - DATE '1970-01-01'` : `(extract(epoch FROM ${col}) * 1000000)::bigint`;
  const lakeType = kind === 'date' ? 'DATE' : kind === 'timestamp' ? 'TIMESTAMP' : 'TIMESTAMPTZ';
  const make = (raw: string): string =>
    kind === 'date'
      ? `DATE '1970-01-01' + ${raw}`
      : `${kind === 'timestamp' ? 'make_timestamp' : 'make_timestamptz'}(${raw})`;
  return {
    select: `CASE WHEN ${col} = 'infinity' THEN ${top} WHEN ${col} = '-infinity' THEN ${bottom} ELSE ${finite} END`,
    csvType: kind === 'date' ? 'INTEGER' : 'BIGINT',
    load: (raw) =>
      `CASE ${raw} WHEN ${top} THEN 'infinity'::${lakeType} WHEN ${bottom} THEN '-infinity'::${lakeType} ELSE ${make(raw)} END`,
  };
}

/** What the rows a sync reads hold in a numeric column without declared precision. */
export interface NumericShape {
  scale: number;
  integerDigits: number;
  /** Some value is NaN or ±Infinity, which no DECIMAL holds. */
  special: boolean;
}

/** What a plan needs to know of the source session and the rows it reads. */
export interface SourceFacts {
  /** Fraction digits of money in the source's lc_monetary (2 for most locales). */
  moneyScale: number;
  /** For numeric columns without declared precision or wider than DECIMAL holds (measuresNumeric), by name. */
  numericShapes?: ReadonlyMap<string, NumericShape>;
  /** For array columns, by name: the dimensions of their values, 0 when they differ (ValueShapes). */
  arrayDepths?: ReadonlyMap<string, number | undefined>;
}

/**
 * numeric without declared precision, and numeric(p,s) with p > 38 (DuckDB's DECIMAL holds 38 digits): their lake
 * type depends on the values the sync reads (NumericShape).
 */
export function measuresNumeric(type: string): boolean {
  const declared = /^numeric\((\d+),\d+\)$/.exec(type);
  return type === 'numeric' || (declared !== null && Number(declared[1]) > 38);
}

/**
 * Plans one column. `enumLabels` (from the catalog, in declared order) makes the column a DuckDB ENUM of the same
 * labels, which compares and sorts in declared order as PostgreSQL's does; the labels travel as text.
 */
export function planColumn(
  name: string,
  type: string,
  enumLabels?: readonly string[],
  facts: SourceFacts = { moneyScale: 2 },
): ColumnPlan {
  const col = pgIdent(name);
  // COPY writes every column in its exact text form, so most columns are selected as they are.
  const text = {
    name,
    sourceType: type,
    select: col,
    lakeType: 'VARCHAR',
    csvType: 'VARCHAR',
    load: (raw: string) => raw,
  };
  if (enumLabels) return { ...text, lakeType: `ENUM(${enumLabels.map((label) => quoteLiteral(label)).join(', ')})` };
  // citext compares by lower(): DuckDB's NOCASE collation, which the lake keeps in the column's tag and applies to
  // every read, so comparisons, IN, LIKE, joins and group-bys fold case as PostgreSQL's do.
  if (CITEXT.test(type)) return { ...text, lakeType: 'VARCHAR COLLATE NOCASE' };
  // PostgreSQL's own char → text conversion removes the padding; comparisons in lake then agree with the source's.
  if (BLANK_PADDED.test(type)) return { ...text, select: `${col}::text` };
  // numeric without a declared precision, or wider than 38 digits, typed by the values read (decision 58): an exact
  // DECIMAL(38, s) where they fit it; whole numbers wider than that an exact BIGNUM; else (NaN, ±Infinity, or wider
  // with fractions) a DOUBLE, the one DuckDB number that holds them and compares them as PostgreSQL does (NaN above
  // every number and equal to itself, the infinities at the ends), to 15–17 significant digits.
  const shape = measuresNumeric(type) ? facts.numericShapes?.get(name) : undefined;
  if (shape) {
    const fits = !shape.special && shape.integerDigits + shape.scale <= 38;
    if (!fits && !shape.special && shape.scale === 0)
      return { ...text, lakeType: 'BIGNUM', load: (raw) => `CAST(${raw} AS BIGNUM)` };
    const lakeType = fits ? `DECIMAL(38,${shape.scale})` : 'DOUBLE';
    return { ...text, lakeType, csvType: lakeType };
  }
  // money is a 64-bit count of the locale's smallest unit: exact as a DECIMAL of that scale, and it compares and
  // sums as numbers (its text, '$1,234.56', would compare as text).
  if (type === 'money') {
    const lakeType = `DECIMAL(19,${facts.moneyScale})`;
    return { ...text, select: `${col}::numeric`, lakeType, csvType: lakeType };
  }
  if (type === 'date') return { ...text, lakeType: 'DATE', ...epochPlan(col, 'date') };
  if (/^timestamp(\(\d\))? without time zone$/.test(type))
    return { ...text, lakeType: 'TIMESTAMP', ...epochPlan(col, 'timestamp') };
  if (/^timestamp(\(\d\))? with time zone$/.test(type))
    return { ...text, lakeType: 'TIMESTAMPTZ', ...epochPlan(col, 'timestamptz') };
  if (type === 'json' || type === 'jsonb') return { ...text, lakeType: 'JSON', load: (raw) => `CAST(${raw} AS JSON)` };
  if (type === 'bytea')
    return { ...text, select: `encode(${col}, 'hex')`, lakeType: 'BLOB', load: (raw) => `from_hex(${raw})` };
  // An interval travels as its three exact fields (months, days, microseconds; each signed, as PostgreSQL keeps
  // them) and becomes an INTERVAL, which DuckDB compares, sorts and groups as PostgreSQL does (a month as 30 days, a
  // day as 24 hours); the lake stores the fields (types.ts, STORED_AS) because Parquet cannot hold negative ones.
  if (isIntervalType(type)) {
    const field = (unit: string): string => `extract(${unit} FROM ${col})`;
    const months = `(${field('year')} * 12 + ${field('month')})::integer`;
    const micros = `(${field('hour')} * 3600000000 + ${field('minute')} * 60000000 + ${field('microseconds')})::bigint`;
    return {
      ...text,
      // NULL stays NULL (|| with a NULL is NULL; concat_ws would skip it and write an empty string).
      select: `${months}::text || ' ' || ${field('day')}::integer::text || ' ' || ${micros}::text`,
      lakeType: 'INTERVAL',
      load: (raw) =>
        intervalFromPartsSql(
          `split_part(${raw}, ' ', 1)::INTEGER`,
          `split_part(${raw}, ' ', 2)::INTEGER`,
          `split_part(${raw}, ' ', 3)::BIGINT`,
        ),
    };
  }
  if (type.endsWith('[]')) {
    // PostgreSQL's array type says nothing of dimensions; the values read do (ValueShapes). A column whose values
    // differ in dimensions has no list type: it stays PostgreSQL's JSON of them.
    const depth = facts.arrayDepths?.get(name) ?? 1;
    if (depth === 0)
      return {
        ...text,
        select: `array_to_json(${col})::text`,
        lakeType: 'JSON',
        load: (raw) => `CAST(${raw} AS JSON)`,
      };
    const lists = '[]'.repeat(depth);
    const nested = (leaf: string): string => quoteLiteral(`${'['.repeat(depth)}"${leaf}"${']'.repeat(depth)}`);
    const elementType = type.slice(0, -2);
    const element = scalarLakeType(elementType);
    // Elements of char(n) arrays lose their padding as char(n) values do.
    if (BLANK_PADDED.test(elementType)) {
      return {
        ...text,
        select: `array_to_json(${col}::text[])::text`,
        lakeType: `VARCHAR${lists}`,
        load: (raw) => `from_json(${raw}, ${nested('VARCHAR')})`,
      };
    }
    // Arrays travel as JSON (nested as deep as their dimensions); element types DuckDB has become typed lists,
    // others lists of exact text.
    const lakeType = `${element ?? 'VARCHAR'}${lists}`;
    const elementText =
      element === undefined ||
      element.startsWith('DECIMAL') ||
      element === 'UUID' ||
      element.startsWith('TIME') ||
      element === 'DATE';
    return {
      ...text,
      select: elementText ? `array_to_json(${col}::text[])::text` : `array_to_json(${col})::text`,
      lakeType,
      load: (raw) =>
        elementText && element
          ? `CAST(from_json(${raw}, ${nested('VARCHAR')}) AS ${lakeType})`
          : `from_json(${raw}, ${nested(element ?? 'VARCHAR')})`,
    };
  }
  const lakeType = scalarLakeType(type);
  if (!lakeType) return text;
  // Scalars are parsed by the CSV reader itself (faster than casting text afterwards, and just as exact).
  return { ...text, lakeType, csvType: lakeType, load: (raw) => raw };
}

/** How many list levels a lake type has (INTEGER[][] → 2); 0 for JSON, what an array column of mixed dimensions is. */
export function listDepth(lakeType: string): number {
  return (/(\[\])*$/.exec(lakeType)?.[0].length ?? 0) / 2;
}

/** PostgreSQL's interval, with or without fields and precision (`interval day to second(3)`), not an array of them. */
export function isIntervalType(type: string): boolean {
  return /^interval( [a-z ]+)?(\(\d\))?$/.test(type);
}

/**
 * Lake tables written before intervals, wide or special numerics and citext were typed hold them as plain text (ISO
 * 8601, the exact digits, the citext's text): changed rows merged into such a table must be text too (a full
 * refresh types the column).
 */
export function keepsText(sourceType: string, lakeType: string | undefined): boolean {
  return (
    (isIntervalType(sourceType) || measuresNumeric(sourceType) || CITEXT.test(sourceType)) && lakeType === 'VARCHAR'
  );
}

/**
 * Plans a column of changes merged into a lake table that holds it as `lakeType` (a cdc apply, which cannot read
 * the table whole instead): as planColumn, but what the table keeps as plain text (keepsText) stays text.
 */
export function planMergedColumn(
  name: string,
  type: string,
  lakeType: string | undefined,
  enumLabels?: readonly string[],
  facts?: SourceFacts,
): ColumnPlan {
  return planColumn(name, keepsText(type, lakeType) ? 'text' : type, enumLabels, facts);
}

/** DuckDB's name for a staged column. */
export const stagedName = (index: number): string => quoteIdentifier(`c${index}`);
