import { castSql, quoteIdentifier, uncollated } from '../../engine/duckdb.js';

/**
 * DuckDB's types and DuckLake's names for them ("Data Types" in the DuckLake specification, and the names the v1.5
 * extension writes: src/common/ducklake_types.cpp). The catalog records a column's DuckLake type, and for a
 * nested one its children (`element` of a list, the fields of a struct, `key` and `value` of a map) as columns of
 * their own; a reader builds the DuckDB type back from them.
 */
const DUCKLAKE_OF: Readonly<Record<string, string>> = {
  BOOLEAN: 'boolean',
  TINYINT: 'int8',
  SMALLINT: 'int16',
  INTEGER: 'int32',
  BIGINT: 'int64',
  HUGEINT: 'int128',
  UTINYINT: 'uint8',
  USMALLINT: 'uint16',
  UINTEGER: 'uint32',
  UBIGINT: 'uint64',
  UHUGEINT: 'uint128',
  FLOAT: 'float32',
  DOUBLE: 'float64',
  TIME: 'time',
  TIME_NS: 'time_ns',
  'TIME WITH TIME ZONE': 'timetz',
  DATE: 'date',
  TIMESTAMP: 'timestamp',
  TIMESTAMP_MS: 'timestamp_ms',
  TIMESTAMP_NS: 'timestamp_ns',
  TIMESTAMP_S: 'timestamp_s',
  'TIMESTAMP WITH TIME ZONE': 'timestamptz',
  INTERVAL: 'interval',
  VARCHAR: 'varchar',
  BLOB: 'blob',
  UUID: 'uuid',
  JSON: 'json',
};

const DUCKDB_OF: Readonly<Record<string, string>> = {
  ...Object.fromEntries(Object.entries(DUCKLAKE_OF).map(([duckdb, ducklake]) => [ducklake, duckdb])),
  timestamp_us: 'TIMESTAMP',
};

const DECIMAL = /^DECIMAL\((\d+),\s*(\d+)\)$/i;

export class UnsupportedTypeError extends Error {}

/** A column as the catalog records it: its DuckLake type, and the columns inside a nested one. */
export interface ColumnShape {
  name: string;
  type: string;
  nullable: boolean;
  children?: ColumnShape[];
  /**
   * The DuckDB type lake reads the column as when DuckLake's cannot say it (an ENUM, recorded as `varchar`): kept as
   * the column's tag `lake.type`, which other readers may ignore.
   */
  lakeType?: string;
}

/** The column tag that keeps a column's DuckDB type where DuckLake's type cannot say it. */
export const TYPE_TAG = 'lake.type';

/**
 * DuckDB types a Parquet file cannot hold exactly, kept as another type and restored when read. An INTERVAL is
 * months, days and microseconds, each signed (as PostgreSQL's); Parquet's INTERVAL holds unsigned months, days and
 * milliseconds, and DuckDB refuses to write a negative one. So the file holds the three numbers, the catalog
 * records them as a struct (what any DuckLake reader finds), and the tag `lake.type` = INTERVAL makes lake read
 * them back as one INTERVAL, which DuckDB compares as PostgreSQL does (a month as 30 days, a day as 24 hours).
 */
const STORED_AS: Readonly<
  Record<string, { stored: string; store: (value: string) => string; restore: (stored: string) => string }>
> = {
  INTERVAL: {
    stored: 'STRUCT(months INTEGER, days INTEGER, micros BIGINT)',
    store: (v) =>
      `CASE WHEN ${v} IS NULL THEN NULL ELSE struct_pack(months := (datepart('year', ${v}) * 12 + datepart('month', ${v}))::INTEGER, days := datepart('day', ${v})::INTEGER, micros := datepart('hour', ${v})::BIGINT * 3600000000 + datepart('minute', ${v})::BIGINT * 60000000 + datepart('microseconds', ${v})) END`,
    restore: (r) =>
      intervalFromPartsSql(
        `struct_extract(${r}, 'months')`,
        `struct_extract(${r}, 'days')`,
        `struct_extract(${r}, 'micros')`,
      ),
  },
  // An integer wider than DECIMAL's 38 digits (from numeric(78,0), say): Parquet has no such type, and DuckDB
  // writes it as its digits; the catalog records them as text.
  BIGNUM: { stored: 'VARCHAR', store: (v) => `CAST(${v} AS VARCHAR)`, restore: (r) => `CAST(${r} AS BIGNUM)` },
};

/** DuckDB SQL making an INTERVAL of signed months, days and microseconds, exactly (NULL if any is NULL). */
export function intervalFromPartsSql(months: string, days: string, micros: string): string {
  return `to_months(${months}) + to_days(${days}) + to_microseconds(${micros})`;
}

/**
 * How a column's files keep it, when not as the type lake reads it as. A collated text (citext's) is plain text in
 * its files, its collation applied by every read, whichever way the files are read.
 */
function storedAs(column: Pick<ColumnShape, 'lakeType'>): (typeof STORED_AS)[string] | undefined {
  const { lakeType } = column;
  if (lakeType === undefined) return undefined;
  const known = STORED_AS[lakeType.toUpperCase()];
  if (known) return known;
  const base = uncollated(lakeType);
  return base === lakeType ? undefined : { stored: base, store: (v) => v, restore: (r) => castSql(r, lakeType) };
}

/** Whether a column is kept in its files as another type than the one lake reads it as (STORED_AS). */
export function isStoredAsOther(column: Pick<ColumnShape, 'lakeType'>): boolean {
  return storedAs(column) !== undefined;
}

/** The DuckDB type a column has in its Parquet files. */
export function storedTypeOf(column: Pick<ColumnShape, 'type' | 'children' | 'lakeType'>): string {
  return storedAs(column)?.stored ?? duckdbTypeOf(column);
}

/** SQL turning a column's stored value `ref` into the value lake reads: restored, cast to its tagged type, or as is. */
export function readValueSql(column: Pick<ColumnShape, 'type' | 'children' | 'lakeType'>, ref: string): string {
  if (!column.lakeType) return ref;
  return storedAs(column)?.restore(ref) ?? castSql(ref, column.lakeType);
}

/** SQL turning a value of a column's lake type into what its files store (the identity for most types). */
export function storeValueSql(column: Pick<ColumnShape, 'lakeType'>, ref: string): string {
  return storedAs(column)?.store(ref) ?? ref;
}

/** Splits a type's parameter list at its top-level commas (names and nested types may hold commas of their own). */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === quote) quote = text[i + 1] === quote ? (i++, quote) : undefined;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts.filter(Boolean);
}

/** A struct field's name and type, as DuckDB writes them (`"a b" INTEGER`, `a VARCHAR`). */
function fieldOf(text: string): [string, string] {
  if (text.startsWith('"')) {
    let i = 1;
    let name = '';
    while (i < text.length) {
      if (text[i] === '"' && text[i + 1] === '"') {
        name += '"';
        i += 2;
      } else if (text[i] === '"') break;
      else name += text[i++];
    }
    return [name, text.slice(i + 1).trim()];
  }
  const space = text.indexOf(' ');
  return [text.slice(0, space), text.slice(space + 1).trim()];
}

/**
 * The catalog's column for a DuckDB column type. An ENUM is recorded as its labels (`varchar`), as DuckLake has no
 * enum; an INTERVAL as what its files store (STORED_AS); a fixed-size array as a list. Anything else DuckLake cannot
 * hold is refused, by name.
 */
export function columnShape(name: string, duckdbType: string, nullable: boolean): ColumnShape {
  // A table's own column only: inside a list or struct a value is read as the file has it.
  const other = STORED_AS[duckdbType.trim().toUpperCase()];
  if (other) return { ...nestedShape(name, other.stored, nullable), lakeType: duckdbType.trim().toUpperCase() };
  return nestedShape(name, duckdbType, nullable);
}

function nestedShape(name: string, duckdbType: string, nullable: boolean): ColumnShape {
  const type = duckdbType.trim();
  const child = (childName: string, childType: string): ColumnShape => nestedShape(childName, childType, true);
  const list = /^(.*)\[\d*\]$/s.exec(type);
  if (list) return { name, type: 'list', nullable, children: [child('element', list[1] as string)] };
  // A collated text (citext's case-insensitive comparisons: VARCHAR COLLATE NOCASE) is text to DuckLake; the tag
  // keeps the collation, which lake's reads apply.
  if (uncollated(type) !== type) return { ...nestedShape(name, uncollated(type), nullable), lakeType: type };
  const nested = /^(STRUCT|MAP|ENUM|UNION)\((.*)\)$/is.exec(type);
  if (nested) {
    const kind = (nested[1] as string).toUpperCase();
    const members = splitTopLevel(nested[2] as string);
    if (kind === 'ENUM') return { name, type: 'varchar', nullable, lakeType: type };
    if (kind === 'MAP')
      return {
        name,
        type: 'map',
        nullable,
        children: [child('key', members[0] ?? ''), child('value', members[1] ?? '')],
      };
    if (kind === 'STRUCT')
      return { name, type: 'struct', nullable, children: members.map((m) => child(...fieldOf(m))) };
  }
  const decimal = DECIMAL.exec(type);
  if (decimal) return { name, type: `decimal(${decimal[1]},${decimal[2]})`, nullable };
  const known = DUCKLAKE_OF[type.toUpperCase()];
  if (!known) throw new UnsupportedTypeError(`DuckLake cannot hold ${type} (column ${name}).`);
  return { name, type: known, nullable };
}

/**
 * Whether the catalog keeps a DuckDB type in the column tag `lake.type` (an ENUM, a collated text, a type stored as
 * another): a writer whose rows DESCRIBE as something else (an ENUM's labels) names the type itself.
 */
export function isTaggedType(duckdbType: string): boolean {
  try {
    return columnShape('', duckdbType, true).lakeType !== undefined;
  } catch (error) {
    // An alias the catalog does not name (TIMESTAMPTZ) is DESCRIBEd as its own name anyway.
    if (error instanceof UnsupportedTypeError) return false;
    throw error;
  }
}

/** The DuckLake name of a DuckDB type that has no children. */
export function ducklakeType(duckdbType: string): string {
  return nestedShape('', duckdbType, true).type;
}

/**
 * The DuckDB type of a column's DuckLake type alone, what another DuckLake reader takes it for (lake's tag aside):
 * an ENUM's, a BIGNUM's or a citext's text. The statistics the catalog records are in its terms.
 */
export function catalogTypeOf(column: Pick<ColumnShape, 'type' | 'children'>): string {
  return duckdbTypeOf({ type: column.type, ...(column.children ? { children: column.children } : {}) });
}

/** The DuckDB type to read a catalog column as, built from its children when it is nested. */
export function duckdbTypeOf(column: Pick<ColumnShape, 'type' | 'children' | 'lakeType'>): string {
  if (column.lakeType) return column.lakeType;
  const children = column.children ?? [];
  switch (column.type.toLowerCase()) {
    case 'list':
      return `${duckdbTypeOf(children[0] as ColumnShape)}[]`;
    case 'map':
      return `MAP(${duckdbTypeOf(children[0] as ColumnShape)}, ${duckdbTypeOf(children[1] as ColumnShape)})`;
    case 'struct':
      return `STRUCT(${children.map((c) => `${quoteIdentifier(c.name)} ${duckdbTypeOf(c)}`).join(', ')})`;
  }
  const decimal = DECIMAL.exec(column.type);
  if (decimal) return `DECIMAL(${decimal[1]},${decimal[2]})`;
  const known = DUCKDB_OF[column.type.toLowerCase()];
  if (!known) throw new UnsupportedTypeError(`DuckLake type ${column.type} has no DuckDB type lake reads it as.`);
  return known;
}
