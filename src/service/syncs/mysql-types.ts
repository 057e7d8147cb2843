import { mysqlIdent } from '../connectors/mysql.js';
import { quoteLiteral } from '../engine/duckdb.js';
import type { ColumnPlan } from './pg-types.js';

/** A MySQL column as information_schema describes it at the start of a sync. */
export interface MysqlColumn {
  name: string;
  /** COLUMN_TYPE: `int(10) unsigned`, `decimal(65,30)`, `enum('a','b')`, `varchar(20)`. */
  columnType: string;
  /** DATA_TYPE: `int`, `decimal`, `enum`, `varchar`, `longtext`. */
  dataType: string;
  /** COLLATION_NAME of a text column, else null. */
  collation: string | null;
  /** A MariaDB JSON column (a LONGTEXT with a json_valid check), or MySQL's JSON. */
  json: boolean;
  notNull: boolean;
}

/** What the rows a sync reads hold in a DECIMAL wider than DuckDB's 38 digits: the integer digits they need. */
export type WideDecimalDigits = ReadonlyMap<string, number>;

const INTEGERS: Record<string, [string, string]> = {
  tinyint: ['TINYINT', 'UTINYINT'],
  smallint: ['SMALLINT', 'USMALLINT'],
  mediumint: ['INTEGER', 'UINTEGER'],
  int: ['INTEGER', 'UINTEGER'],
  integer: ['INTEGER', 'UINTEGER'],
  bigint: ['BIGINT', 'UBIGINT'],
};

const TEXTS = new Set(['char', 'varchar', 'tinytext', 'text', 'mediumtext', 'longtext', 'set']);
const BINARIES = new Set(['binary', 'varbinary', 'tinyblob', 'blob', 'mediumblob', 'longblob']);
const GEOMETRIES = new Set([
  'geometry',
  'point',
  'linestring',
  'polygon',
  'multipoint',
  'multilinestring',
  'multipolygon',
  'geometrycollection',
  'geomcollection',
]);

/**
 * The DuckDB collation that compares as a MySQL one: `_ci` folds case, and accents too unless `_as_` (MySQL 8's
 * `utf8mb4_0900_as_ci`); `_bin`, `_cs` and binary compare exactly. Trailing spaces, which PAD SPACE collations
 * ignore, count in DuckDB (docs/api.md).
 */
export function collationOf(collation: string | null): string | undefined {
  if (!collation || !/_ci$/.test(collation)) return undefined;
  return /_as_ci$/.test(collation) ? 'NOCASE' : 'NOCASE.NOACCENT';
}

/** An ENUM's labels in declared order, from COLUMN_TYPE (`enum('a','it''s')`). */
export function enumLabels(columnType: string): string[] {
  const body = /^enum\((.*)\)$/is.exec(columnType)?.[1] ?? '';
  return [...body.matchAll(/'((?:[^'\\]|''|\\.)*)'/g)].map((m) =>
    (m[1] as string).replace(/''/g, "'").replace(/\\(.)/g, '$1'),
  );
}

/**
 * How one MySQL column travels without loss: the MySQL expression selected as text, the DuckDB type it becomes,
 * and the DuckDB expression that makes it that type from the staged text (the same plan shape as PostgreSQL's).
 */
export function planMysqlColumn(column: MysqlColumn, wide: WideDecimalDigits = new Map()): ColumnPlan {
  const col = mysqlIdent(column.name);
  const text: ColumnPlan = {
    name: column.name,
    sourceType: column.columnType,
    select: col,
    lakeType: 'VARCHAR',
    csvType: 'VARCHAR',
    load: (raw) => raw,
  };
  const type = column.dataType.toLowerCase();
  const unsigned = /\bunsigned\b/i.test(column.columnType);
  const typed = (lakeType: string): ColumnPlan => ({ ...text, lakeType, csvType: lakeType });
  const integer = INTEGERS[type];
  if (integer) return typed(integer[unsigned ? 1 : 0]);
  if (type === 'decimal' || type === 'numeric') {
    const [, p, s] = /\((\d+),(\d+)\)/.exec(column.columnType) ?? ['', '10', '0'];
    const [precision, scale] = [Number(p), Number(s)];
    if (precision <= 38) return typed(`DECIMAL(${precision},${scale})`);
    // Wider than DuckDB's DECIMAL (to 65 digits): exact where the values read fit 38 digits, a whole number wider
    // than that an exact BIGNUM, else a DOUBLE (decision 58, as for PostgreSQL's numeric).
    const digits = wide.get(column.name) ?? precision - scale;
    if (digits + scale <= 38) return typed(`DECIMAL(38,${scale})`);
    if (scale === 0) return { ...text, lakeType: 'BIGNUM', load: (raw) => `CAST(${raw} AS BIGNUM)` };
    return typed('DOUBLE');
  }
  if (type === 'float') return typed('FLOAT');
  if (type === 'double' || type === 'real') return typed('DOUBLE');
  // BIT(n) is a number to MySQL's comparisons and arithmetic (b = 5, b + 0).
  if (type === 'bit') return { ...typed('UBIGINT'), select: `${col} + 0` };
  if (type === 'year') return typed('SMALLINT');
  // Zero dates ('0000-00-00', '2024-00-10'), which MySQL may keep, are no date: they become NULL.
  if (type === 'date') return { ...text, lakeType: 'DATE', load: (raw) => `TRY_CAST(${raw} AS DATE)` };
  if (type === 'datetime') return { ...text, lakeType: 'TIMESTAMP', load: (raw) => `TRY_CAST(${raw} AS TIMESTAMP)` };
  // TIMESTAMP is UTC inside MySQL; the session reads it in UTC (time_zone '+00:00').
  if (type === 'timestamp')
    return {
      ...text,
      lakeType: 'TIMESTAMP WITH TIME ZONE',
      load: (raw) => `TRY_CAST(${raw} || '+00' AS TIMESTAMPTZ)`,
    };
  // TIME is a duration from -838:59:59 to 838:59:59: an INTERVAL of its microseconds, which compares and sorts as
  // MySQL's TIME does (a time of day is one too).
  if (type === 'time')
    return {
      ...text,
      select: `IF(${col} < TIME '00:00:00', -1, 1) * ((HOUR(${col}) * 3600 + MINUTE(${col}) * 60 + SECOND(${col})) * 1000000 + MICROSECOND(${col}))`,
      lakeType: 'INTERVAL',
      csvType: 'BIGINT',
      load: (raw) => `to_microseconds(${raw})`,
    };
  if (type === 'json' || column.json) return { ...text, lakeType: 'JSON', load: (raw) => `CAST(${raw} AS JSON)` };
  if (BINARIES.has(type))
    return { ...text, select: `HEX(${col})`, lakeType: 'BLOB', load: (raw) => `from_hex(${raw})` };
  if (GEOMETRIES.has(type)) return { ...text, select: `ST_AsText(${col})` };
  if (type === 'enum') {
    // '' is the value MySQL keeps for an invalid one (index 0, before every label).
    const labels = enumLabels(column.columnType);
    const all = labels.includes('') ? labels : ['', ...labels];
    return { ...text, lakeType: `ENUM(${all.map((label) => quoteLiteral(label)).join(', ')})` };
  }
  if (TEXTS.has(type)) {
    const collation = collationOf(column.collation);
    return collation ? { ...text, lakeType: `VARCHAR COLLATE ${collation}` } : text;
  }
  return { ...text, select: `CAST(${col} AS CHAR)` };
}

/** Lake types whose MySQL text is digits, signs, points, dashes and colons: never a quote, comma or line end. */
const PLAIN_TEXT = /^(U?(TINYINT|SMALLINT|INTEGER|BIGINT)|DECIMAL|DOUBLE|FLOAT|BIGNUM|DATE|TIMESTAMP|INTERVAL)\b/;

/**
 * What a read of these columns selects, and how each value becomes a field of its CSV record (recordStream): numbers,
 * dates and times go as they are; text is quoted with its quotes doubled (so an empty string stays apart from NULL),
 * and NULL is left empty. Quoting only text made a 6-column table's read a fifth faster than quoting every value.
 * Each column is selected as it is, in the connection's utf8mb4, to which the server converts every text it sends;
 * lake builds the records from the values, where the server built each with CONCAT and REPLACE before (about a third
 * of its work per row in bench/sync-mysql.mjs).
 */
export function recordSelect(plans: readonly ColumnPlan[]): { sql: string; quoted: boolean[] } {
  return {
    sql: plans.map((p) => p.select).join(', '),
    quoted: plans.map((p) => !PLAIN_TEXT.test(p.lakeType)),
  };
}
