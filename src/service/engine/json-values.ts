import type {
  DuckDBArrayType,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBIntervalValue,
  DuckDBListType,
  DuckDBListValue,
  DuckDBMapType,
  DuckDBMapValue,
  DuckDBStructType,
  DuckDBStructValue,
  DuckDBStructVector,
  DuckDBTimeValue,
  DuckDBType,
  DuckDBUnionType,
  DuckDBUnionValue,
  DuckDBValue,
  DuckDBVector,
} from '@duckdb/node-api';
import { randomBytes } from 'node:crypto';
import { groupDigits } from '../../support/group-digits.js';
import { dateWriter, decimalText, timestampWriter, timeText } from './value-text.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type ValueConverter = (value: DuckDBValue) => JsonValue;
/** Converts one row of a column from its vector. */
export type VectorConverter = (vector: DuckDBVector, row: number) => JsonValue;

// DuckDB type ids, kept here as numbers so this module does not load the engine.
const T = {
  BOOLEAN: 1,
  TINYINT: 2,
  SMALLINT: 3,
  INTEGER: 4,
  BIGINT: 5,
  UTINYINT: 6,
  USMALLINT: 7,
  UINTEGER: 8,
  UBIGINT: 9,
  FLOAT: 10,
  DOUBLE: 11,
  TIMESTAMP: 12,
  DATE: 13,
  TIME: 14,
  INTERVAL: 15,
  HUGEINT: 16,
  VARCHAR: 17,
  BLOB: 18,
  DECIMAL: 19,
  TIMESTAMP_S: 20,
  TIMESTAMP_MS: 21,
  TIMESTAMP_NS: 22,
  ENUM: 23,
  LIST: 24,
  STRUCT: 25,
  MAP: 26,
  UUID: 27,
  UNION: 28,
  BIT: 29,
  TIME_TZ: 30,
  TIMESTAMP_TZ: 31,
  UHUGEINT: 32,
  ARRAY: 33,
} as const;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const DATE_INFINITY_DAYS = 2_147_483_647;
const TIMESTAMP_INFINITY = 9_223_372_036_854_775_807n;

/**
 * How deep a JSON value may nest and still be returned as JSON: a page, a worker's message and a response are
 * written by JSON.stringify, which runs out of stack near 5,000 levels (and lake's own walks over a value recurse).
 */
export const MAX_JSON_DEPTH = 1000;

/** How deep `text` nests, counted until it passes `limit` (brackets inside strings do not count). */
function nestingPasses(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) i++;
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      if (++depth > limit) return true;
    } else if (code === 0x5d || code === 0x7d) depth--;
  }
  return false;
}

/** A JSON column's value as JSON, refused with what to do instead when it nests deeper than MAX_JSON_DEPTH. */
function parseJson(text: string): JsonValue {
  // A value nests at most half as deep as it is long: short ones need no count.
  if (text.length > 2 * MAX_JSON_DEPTH && nestingPasses(text, MAX_JSON_DEPTH))
    throw new Error(
      `A JSON value nests deeper than ${groupDigits(MAX_JSON_DEPTH)} levels, more than lake returns as JSON. Select it as text instead (the column cast to VARCHAR).`,
    );
  if (!MAY_BE_INEXACT.test(text)) return JSON.parse(text) as JsonValue;
  // Written back by JSON.stringify, such numbers would change (12345678901234567890 as …000, NaN and 1e400 as
  // null): each is its exact text instead, as a BIGINT past 2^53 and a DOUBLE that is not finite are.
  const marked = text.replace(INEXACT_NUMBERS, (token) =>
    token.startsWith('"') || Number.isSafeInteger(Number(token)) ? token : `"${EXACT_MARK}${token}"`,
  );
  return JSON.parse(marked, exactNumber) as JsonValue;
}

/** Whether JSON text may hold a number a double does not keep (false: it surely holds none). */
const MAY_BE_INEXACT = /\d{16}|NaN|Infinity|[eE]\+?\d{3}/;

/** Strings, and the tokens of numbers that may not fit a double: NaN and Infinity (DuckDB writes them), long integers. */
const INEXACT_NUMBERS = /"(?:[^"\\]|\\.)*"|(?<![\w.+-])-?(?:Infinity|NaN|\d{16,}(?![\w.+-]))/g;

/** Marks a number's text through JSON.parse (random, so no string of a caller's value can pass for one). */
const EXACT_MARK = `lake-exact-${randomBytes(6).toString('hex')}:`;

function exactNumber(_key: string, value: unknown): unknown {
  if (typeof value === 'number')
    return Number.isFinite(value) ? value : Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
  if (typeof value !== 'string' || !value.startsWith(EXACT_MARK)) return value;
  const token = value.slice(EXACT_MARK.length);
  return token.endsWith('NaN') ? 'NaN' : token;
}

/** Integers are JSON numbers while exact in a double (|n| ≤ 2^53−1), and decimal strings beyond. */
function integer(value: DuckDBValue): JsonValue {
  if (typeof value === 'bigint') return value <= MAX_SAFE && value >= -MAX_SAFE ? Number(value) : value.toString();
  return value as number;
}

function float(value: DuckDBValue): JsonValue {
  const n = value as number;
  if (Number.isFinite(n)) return n;
  return Number.isNaN(n) ? 'NaN' : n > 0 ? 'Infinity' : '-Infinity';
}

/** A column's dates: "2024-02-29", "0044-03-15 (BC)", "infinity". */
function date(): ValueConverter {
  const write = dateWriter();
  return (value) => {
    const days = (value as DuckDBDateValue).days;
    if (days === DATE_INFINITY_DAYS) return 'infinity';
    if (days === -DATE_INFINITY_DAYS) return '-infinity';
    return write(days);
  };
}

/** A DECIMAL's exact digits ("-12.50"), as DuckDB writes them. */
function decimal(value: DuckDBValue): JsonValue {
  const { value: scaled, scale } = value as DuckDBDecimalValue;
  return decimalText(scaled, scale) ?? String(value);
}

/** ISO 8601 local date-time ("2024-01-02T03:04:05.123456"); with zone, always UTC with a Z. */
function timestamp(withZone: boolean): ValueConverter {
  const write = timestampWriter();
  return (value) => {
    const parts = value as unknown as { micros?: bigint; nanos?: bigint; millis?: bigint; seconds?: bigint };
    const raw = parts.micros ?? parts.nanos ?? parts.millis ?? parts.seconds;
    if (raw === TIMESTAMP_INFINITY) return 'infinity';
    if (raw === -TIMESTAMP_INFINITY) return '-infinity';
    const micros =
      parts.micros ??
      (parts.millis !== undefined
        ? parts.millis * 1000n
        : parts.seconds !== undefined
          ? parts.seconds * 1_000_000n
          : undefined);
    if (micros !== undefined) {
      const text = write(micros);
      return withZone ? `${text}Z` : text;
    }
    // Nanosecond precision: DuckDB's own exact text.
    const text = String(value).replace(' ', 'T');
    return withZone ? text.replace(/\+00(:00)?$/, 'Z') : text;
  };
}

/** ISO 8601 duration, each part signed as DuckDB keeps it: P1Y2M3DT4H5M6.5S. */
export function intervalToIso(value: DuckDBIntervalValue): string {
  const years = Math.trunc(value.months / 12);
  const months = value.months % 12;
  let micros = value.micros;
  const negative = micros < 0n;
  if (negative) micros = -micros;
  const hours = micros / 3_600_000_000n;
  const minutes = (micros % 3_600_000_000n) / 60_000_000n;
  const secondsMicros = micros % 60_000_000n;
  const sign = negative ? '-' : '';
  let seconds = `${secondsMicros / 1_000_000n}`;
  const fraction = secondsMicros % 1_000_000n;
  if (fraction > 0n) seconds += `.${fraction.toString().padStart(6, '0').replace(/0+$/, '')}`;
  let out = 'P';
  if (years) out += `${years}Y`;
  if (months) out += `${months}M`;
  if (value.days) out += `${value.days}D`;
  let time = '';
  if (hours) time += `${sign}${hours}H`;
  if (minutes) time += `${sign}${minutes}M`;
  if (secondsMicros) time += `${sign}${seconds}S`;
  if (time) out += `T${time}`;
  return out === 'P' ? 'PT0S' : out;
}

/**
 * DuckDB SQL giving `ref`'s INTERVAL as the text intervalToIso makes of it: how a result keeps an INTERVAL column,
 * since Parquet's INTERVAL holds neither a negative value nor microseconds.
 */
export function intervalToIsoSql(ref: string): string {
  const part = (unit: string): string => `datepart('${unit}', ${ref})`;
  const unit = (value: string, letter: string): string =>
    `CASE WHEN ${value} <> 0 THEN ${value}::VARCHAR || '${letter}' ELSE '' END`;
  const negative = `CASE WHEN ${part('hour')} < 0 OR ${part('minute')} < 0 OR ${part('microseconds')} < 0 THEN '-' ELSE '' END`;
  const micros = `abs(${part('microseconds')})`;
  const seconds = `(${micros} // 1000000)::VARCHAR || CASE WHEN ${micros} % 1000000 <> 0 THEN '.' || rtrim(lpad((${micros} % 1000000)::VARCHAR, 6, '0'), '0') ELSE '' END`;
  const time = `CASE WHEN ${part('hour')} <> 0 THEN ${negative} || abs(${part('hour')})::VARCHAR || 'H' ELSE '' END
    || CASE WHEN ${part('minute')} <> 0 THEN ${negative} || abs(${part('minute')})::VARCHAR || 'M' ELSE '' END
    || CASE WHEN ${micros} <> 0 THEN ${negative} || ${seconds} || 'S' ELSE '' END`;
  const text = `'P' || ${unit(part('year'), 'Y')} || ${unit(part('month'), 'M')} || ${unit(part('day'), 'D')}
    || CASE WHEN (${time}) <> '' THEN 'T' || ${time} ELSE '' END`;
  return `CASE WHEN ${ref} IS NULL THEN NULL WHEN (${text}) = 'P' THEN 'PT0S' ELSE ${text} END`;
}

/**
 * Sets a named value as an own property of a plain `{}`. V8 keeps such objects in fast shapes, where an
 * Object.create(null) object is a dictionary: filling, sizing and stringifying a page of those took twice as long
 * (docs/performance.md, "Paging"). Only a key named __proto__ is defined rather than assigned, since assigning it
 * would set the prototype instead of a field.
 */
export function setOwn(target: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function nullable(convert: ValueConverter): ValueConverter {
  return (value) => (value === null || value === undefined ? null : convert(value));
}

/**
 * Like converterFor, but reading a STRUCT column's fields from their own vectors by position: @duckdb/node-api's
 * struct values are plain objects built by assignment, where a field named `__proto__` is lost. Structs nested in
 * lists, maps or unions still come through those values.
 */
export function vectorConverterFor(type: DuckDBType): VectorConverter {
  if (type.typeId === T.STRUCT && type.alias === undefined) {
    const struct = type as DuckDBStructType;
    const fields = struct.entryNames.map(
      (name, i) => [name, vectorConverterFor(struct.entryTypes[i] as DuckDBType)] as const,
    );
    return (vector, row) => {
      const structVector = vector as DuckDBStructVector;
      if (!structVector.isItemValid(row)) return null;
      const out: Record<string, JsonValue> = {};
      fields.forEach(([name, convert], i) =>
        setOwn(out, name, convert(structVector.entryVectorAt(i) as DuckDBVector, row)),
      );
      return out;
    };
  }
  const convert = converterFor(type);
  return (vector, row) => convert(vector.getItem(row) as DuckDBValue);
}

/**
 * Builds, once per column, the function that turns DuckDB values of that type into exact JSON. docs/api.md
 * ("Inline values") lists the rules; nothing goes through a lossy JavaScript number.
 */
export function converterFor(type: DuckDBType): ValueConverter {
  switch (type.typeId) {
    case T.BOOLEAN:
    case T.TINYINT:
    case T.SMALLINT:
    case T.INTEGER:
    case T.UTINYINT:
    case T.USMALLINT:
    case T.UINTEGER:
      return nullable((v) => v as number | boolean);
    case T.BIGINT:
    case T.UBIGINT:
    case T.HUGEINT:
    case T.UHUGEINT:
      return nullable(integer);
    case T.FLOAT:
    case T.DOUBLE:
      return nullable(float);
    case T.DATE:
      return nullable(date());
    case T.DECIMAL:
      return nullable(decimal);
    case T.TIME:
      return nullable((v) => timeText((v as DuckDBTimeValue).micros) ?? String(v));
    case T.TIMESTAMP:
    case T.TIMESTAMP_S:
    case T.TIMESTAMP_MS:
    case T.TIMESTAMP_NS:
      return nullable(timestamp(false));
    case T.TIMESTAMP_TZ:
      return nullable(timestamp(true));
    case T.INTERVAL:
      return nullable((v) => intervalToIso(v as DuckDBIntervalValue));
    case T.BLOB:
      return nullable((v) => Buffer.from((v as DuckDBBlobValue).bytes).toString('base64'));
    case T.VARCHAR:
      if (type.alias === 'JSON') return nullable((v) => parseJson(v as string));
      return nullable((v) => v as string);
    case T.LIST:
    case T.ARRAY: {
      const item = converterFor((type as DuckDBListType | DuckDBArrayType).valueType);
      return nullable((v) => (v as DuckDBListValue).items.map(item));
    }
    case T.STRUCT: {
      const struct = type as DuckDBStructType;
      const fields = struct.entryNames.map(
        (name, i) => [name, converterFor(struct.entryTypes[i] as DuckDBType)] as const,
      );
      return nullable((v) => {
        const entries = (v as DuckDBStructValue).entries;
        const out: Record<string, JsonValue> = {};
        for (const [name, convert] of fields) setOwn(out, name, convert(entries[name] as DuckDBValue));
        return out;
      });
    }
    case T.MAP: {
      const map = type as DuckDBMapType;
      const key = converterFor(map.keyType);
      const val = converterFor(map.valueType);
      // Text keys make a JSON object; any other key type keeps its type in a list of {key, value}.
      if (map.keyType.typeId === T.VARCHAR) {
        return nullable((v) =>
          Object.fromEntries((v as DuckDBMapValue).entries.map((e) => [String(e.key), val(e.value)])),
        );
      }
      return nullable((v) => (v as DuckDBMapValue).entries.map((e) => ({ key: key(e.key), value: val(e.value) })));
    }
    case T.UNION: {
      const union = type as DuckDBUnionType;
      const members = Object.fromEntries(
        union.memberTags.map((tag, i) => [tag, converterFor(union.memberTypes[i] as DuckDBType)]),
      );
      return nullable((v) => (members[(v as DuckDBUnionValue).tag] as ValueConverter)((v as DuckDBUnionValue).value));
    }
    default:
      // UUID, ENUM, TIME_TZ, BIT and anything newer: DuckDB's own exact text.
      return nullable((v) => String(v));
  }
}
