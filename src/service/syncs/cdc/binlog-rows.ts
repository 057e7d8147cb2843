import { inflateRawSync, inflateSync } from 'node:zlib';
import buffer from 'node:buffer';
import { zongjiDriver } from '../../../support/source-drivers.js';
import { checkJsonValue } from './binlog-json.js';
import { TWO_DIGITS } from '../../../support/two-digits.js';

/**
 * Lake's own reading of binary log row images, in place of @vlasky/zongji's, for the column types most tables hold
 * (integers, floats, DECIMAL, text in UTF-8 or latin1, binary strings, DATE, DATETIME, TIMESTAMP); any other column
 * is read by zongji's own `readMysqlValue`, so every value is what zongji gives (test/service/binlog-rows.test.ts
 * reads one log both ways and compares). Why: zongji builds each value through general helpers (a 32-character
 * string cut for every date part and decimal group, a copy of every DECIMAL, a codec looked up for every latin1
 * string, the row's bit counts per row), which made reading a 1% change of a 6,000,000-row table from the log most
 * of its sync (docs/performance.md). zongji's package exports none of its row classes, so its module is reached by
 * its path (source-drivers.ts) and its three row events read their rows here; the version is pinned in
 * package.json, and when the shape read here is not there, zongji's own reading stays.
 */

/** zongji's parser over one event's bytes (lib/reader.js). */
interface EventParser {
  _buffer: Buffer;
  _offset: number;
}

/** One column as zongji's table map holds it (lib/binlog_event.js): the log's type code and metadata. */
interface MappedColumn {
  name: string;
  charset: string | null | undefined;
  type: number;
  metadata?: Record<string, number>;
}

interface MappedTable {
  parentSchema?: string;
  tableName?: string;
  columns: MappedColumn[];
  columnSchemas: { COLUMN_TYPE: string; UNSIGNED?: boolean }[];
}

interface ReaderOptions {
  connection?: { config?: { dateStrings?: unknown; timezone?: string; decimalNumbers?: unknown } } | null;
}

type ZongjiValueReader = (
  parser: EventParser,
  column: MappedColumn,
  schema: MappedTable['columnSchemas'][number],
  table: MappedTable,
  zongji: ReaderOptions,
) => unknown;

interface RowsEventShape {
  tableId: number;
  tableMap: Record<number, MappedTable>;
  columns_present_bitmap: Buffer;
  columns_present_bitmap2?: Buffer;
  _zongji: ReaderOptions;
}

/** Where the row image being read stands: the event's bytes and the next byte to read. */
interface Cursor {
  buf: Buffer;
  at: number;
  parser: EventParser;
}

/** Reads a column's value; `skip`, where there, only moves past it (its length known without decoding it). */
type ColumnReader = ((cursor: Cursor) => unknown) & { skip?: (cursor: Cursor) => void };

function withSkip(read: (cursor: Cursor) => unknown, skip: (cursor: Cursor) => void): ColumnReader {
  return Object.assign(read, { skip });
}

/** The binary log's column type codes (MySQL's enum_field_types) read here. */
const TYPE = {
  TINY: 1,
  SHORT: 2,
  LONG: 3,
  FLOAT: 4,
  DOUBLE: 5,
  LONGLONG: 8,
  INT24: 9,
  DATE: 10,
  VARCHAR: 15,
  TIMESTAMP2: 17,
  DATETIME2: 18,
  BLOB_COMPRESSED: 140,
  VARCHAR_COMPRESSED: 141,
  JSON: 245,
  NEWDECIMAL: 246,
  TINY_BLOB: 249,
  MEDIUM_BLOB: 250,
  LONG_BLOB: 251,
  BLOB: 252,
  STRING: 254,
} as const;

let installing: Promise<boolean> | undefined;
let imagesRead = 0;

/** How many row images lake's reader decoded in this process (the debug timing reports it; tests check it ran). */
export function rowImagesRead(): number {
  return imagesRead;
}

/** What a reader's rows are read with beyond its connection's options. */
export interface RowReading {
  /** Single-byte character sets of its tables' text, each byte's character as the server converts it. */
  charsets: ReadonlyMap<string, readonly string[]>;
  /** The longest value a compressed column may inflate to (a sync's longest record). */
  maxValueBytes: number;
  /**
   * Each table's key columns by `schema.table`: an update's row before it is then read for its key alone, unless
   * the key changed (the sync needs the rest of that row only to delete the old key's row). Tables not here are
   * read whole.
   */
  keys?: ReadonlyMap<string, readonly string[]>;
}

const readings = new WeakMap<object, RowReading>();

/** How this reader's row images are read (its tables' character sets, the bound on a compressed value). */
export function readWith(reader: object, reading: RowReading): void {
  readings.set(reader, reading);
}

/** Makes zongji's row events read their rows here; false when its modules are not shaped as this reader expects. */
export function useLakeRowImages(): Promise<boolean> {
  installing ??= install();
  return installing;
}

async function install(): Promise<boolean> {
  let rows: Record<string, unknown>;
  let common: Record<string, unknown>;
  try {
    ({ rowsEvent: rows, common } = await zongjiDriver());
  } catch {
    return false;
  }
  const readValue = common.readMysqlValue as ZongjiValueReader | undefined;
  const classes = [rows.WriteRows, rows.DeleteRows, rows.UpdateRows] as (
    { prototype: Record<string, unknown> } | undefined
  )[];
  if (typeof readValue !== 'function' || !classes.every((c) => typeof c?.prototype._fetchOneRow === 'function'))
    return false;
  const [writeRows, deleteRows, updateRows] = classes as { prototype: Record<string, unknown> }[];
  const oneImage = function (this: RowsEventShape, parser: EventParser): Record<string, unknown> {
    const table = this.tableMap[this.tableId] as MappedTable;
    return readImage(parser, plan(table, this._zongji, readValue), this.columns_present_bitmap);
  };
  (writeRows as { prototype: Record<string, unknown> }).prototype._fetchOneRow = oneImage;
  (deleteRows as { prototype: Record<string, unknown> }).prototype._fetchOneRow = oneImage;
  (updateRows as { prototype: Record<string, unknown> }).prototype._fetchOneRow = function (
    this: RowsEventShape,
    parser: EventParser,
  ) {
    const table = this.tableMap[this.tableId] as MappedTable;
    const readers = plan(table, this._zongji, readValue);
    const { keyColumns } = readers;
    if (keyColumns === undefined) {
      return {
        before: readImage(parser, readers, this.columns_present_bitmap),
        after: readImage(parser, readers, this.columns_present_bitmap2 as Buffer),
      };
    }
    // Half of a change's decoding is its row before: read its key alone, and the rest only when the key moved.
    const start = parser._offset;
    const keyBefore = readImage(parser, readers, this.columns_present_bitmap, keyColumns);
    const after = readImage(parser, readers, this.columns_present_bitmap2 as Buffer);
    if (readers.keyNames.every((name) => sameKeyValue(keyBefore[name], after[name])))
      return { before: keyBefore, after };
    const end = parser._offset;
    parser._offset = start;
    const before = readImage(parser, readers, this.columns_present_bitmap);
    parser._offset = end;
    return { before, after };
  };
  return true;
}

interface TablePlan {
  names: string[];
  readers: ColumnReader[];
  /** Which columns are the table's key (undefined: its key is not known, and rows before an update are read whole). */
  keyColumns: boolean[] | undefined;
  keyNames: string[];
  cursor: Cursor;
}

/** Each table map event gives its table a new columns array: the plan is made once per map, for its row events. */
const plans = new WeakMap<MappedColumn[], TablePlan>();

function plan(table: MappedTable, zongji: ReaderOptions, readValue: ZongjiValueReader): TablePlan {
  const known = plans.get(table.columns);
  if (known) return known;
  const config = zongji.connection?.config ?? {};
  const reading = readings.get(zongji);
  const key = reading?.keys?.get(`${table.parentSchema}.${table.tableName}`);
  // Every key column must be in the map: a key the log does not carry means reading the rows whole.
  const keyKnown = key !== undefined && key.every((name) => table.columns.some((c) => c.name === name));
  const made: TablePlan = {
    names: table.columns.map((c) => c.name),
    keyColumns: keyKnown ? table.columns.map((c) => key.includes(c.name)) : undefined,
    keyNames: keyKnown ? [...key] : [],
    readers: table.columns.map((column, i) => {
      const schema = table.columnSchemas[i] as MappedTable['columnSchemas'][number];
      // MySQL 8's JSON is decoded by zongji, once it is known to be a document MySQL could have written.
      const jsonLengthBytes = column.type === TYPE.JSON ? (column.metadata?.length_size ?? 0) : 0;
      const zongjis: ColumnReader = (cursor) => {
        cursor.parser._offset = cursor.at;
        if (jsonLengthBytes > 0) checkJsonValue(cursor.buf, cursor.at, jsonLengthBytes);
        const value = readValue(cursor.parser, column, schema, table, zongji);
        cursor.at = cursor.parser._offset;
        return value;
      };
      return columnReader(column, schema, config, reading) ?? zongjis;
    }),
    cursor: { buf: Buffer.alloc(0), at: 0, parser: { _buffer: Buffer.alloc(0), _offset: 0 } },
  };
  plans.set(table.columns, made);
  return made;
}

/**
 * A row image: the null bitmap of the columns present, then each present, non-null value (zongji's readRow). With
 * `only`, the row holds just those columns; the others are passed over without being decoded where their length is
 * known from their bytes (and decoded and dropped where zongji reads them).
 */
function readImage(
  parser: EventParser,
  plan: TablePlan,
  present: Buffer,
  only?: readonly boolean[],
): Record<string, unknown> {
  const cursor = plan.cursor;
  const buf = parser._buffer;
  cursor.buf = buf;
  cursor.parser = parser;
  let presentCount = 0;
  for (let i = 0; i < present.length; i++) presentCount += BITS_SET[present[i] as number] as number;
  const nulls = parser._offset;
  cursor.at = nulls + ((presentCount + 7) >> 3);
  const row: Record<string, unknown> = {};
  const { names, readers } = plan;
  for (let i = 0, n = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (((present[i >> 3] as number) & (1 << (i & 7))) === 0) {
      if (only === undefined || only[i] === true) row[name] = null;
      continue;
    }
    const isNull = ((buf[nulls + (n >> 3)] as number) & (1 << (n & 7))) !== 0;
    n++;
    if (only !== undefined && only[i] !== true) {
      const reader = readers[i] as ColumnReader;
      if (!isNull) (reader.skip ?? reader)(cursor);
      continue;
    }
    row[name] = isNull ? null : (readers[i] as ColumnReader)(cursor);
  }
  // zongji reads row images until its parser reaches the event's end: an image that took no bytes, or ran past the
  // event's bytes (a length or a type's metadata from a server that lies), would have it read forever.
  if (!(cursor.at > nulls && cursor.at <= buf.length))
    throw new RangeError('a row image of the binary log does not fit its event; the log cannot be read');
  parser._offset = cursor.at;
  imagesRead++;
  return row;
}

/** Two decoded values of a key column are the same (bytes by content), as the sync compares them. */
export function sameKeyValue(a: unknown, b: unknown): boolean {
  return Buffer.isBuffer(a) && Buffer.isBuffer(b) ? a.equals(b) : a === b;
}

const BITS_SET = Array.from({ length: 256 }, (_, byte) => {
  let count = 0;
  for (let b = byte; b > 0; b >>= 1) count += b & 1;
  return count;
});

/** A reader of this column's values, or undefined where zongji's own reading stays. */
function columnReader(
  column: MappedColumn,
  schema: MappedTable['columnSchemas'][number],
  config: { dateStrings?: unknown; timezone?: string; decimalNumbers?: unknown },
  reading: RowReading | undefined,
): ColumnReader | undefined {
  const charsets = reading?.charsets;
  // zongji's rule: the log's signedness when it carries it, else the column's declared type.
  const unsigned = schema.UNSIGNED ?? schema.COLUMN_TYPE.includes('unsigned');
  const meta = column.metadata ?? {};
  // Dates as MySQL's text (zongji's dateStrings), TIMESTAMP in UTC: how lake's reader is configured.
  const dateText = config.dateStrings === true;
  switch (column.type) {
    case TYPE.TINY:
      return unsigned ? fixed(1, (b, at) => b.readUInt8(at)) : fixed(1, (b, at) => b.readInt8(at));
    case TYPE.SHORT:
      return unsigned ? fixed(2, (b, at) => b.readUInt16LE(at)) : fixed(2, (b, at) => b.readInt16LE(at));
    case TYPE.INT24:
      return unsigned ? fixed(3, (b, at) => b.readUIntLE(at, 3)) : fixed(3, (b, at) => b.readIntLE(at, 3));
    case TYPE.LONG:
      return unsigned ? fixed(4, (b, at) => b.readUInt32LE(at)) : fixed(4, (b, at) => b.readInt32LE(at));
    case TYPE.LONGLONG:
      return fixed(8, unsigned ? readUnsigned64 : readSigned64);
    case TYPE.FLOAT:
      return fixed(4, (b, at) => b.readFloatLE(at));
    case TYPE.DOUBLE:
      return fixed(8, (b, at) => b.readDoubleLE(at));
    case TYPE.NEWDECIMAL:
      // MySQL's bounds (65 digits, 30 after the point); other metadata is left to zongji, which refuses it.
      return config.decimalNumbers || !validDecimal(meta.precision, meta.decimals)
        ? undefined
        : decimalReader(meta.precision as number, meta.decimals as number);
    case TYPE.VARCHAR:
    case TYPE.STRING: {
      // Only text CHAR and VARCHAR: MariaDB's UUID, INET and VECTOR and fixed BINARY ride on these codes too.
      if (!/^(var)?char\(/.test(schema.COLUMN_TYPE)) return undefined;
      const text = textDecoder(column.charset, charsets);
      const lengthBytes = (meta.max_length ?? 0) > 255 ? 2 : 1;
      return text && lengthed(lengthBytes, text);
    }
    case TYPE.TINY_BLOB:
    case TYPE.MEDIUM_BLOB:
    case TYPE.LONG_BLOB:
    case TYPE.BLOB: {
      const lengthBytes = meta.length_size ?? 0;
      if (lengthBytes < 1 || lengthBytes > 4) return undefined;
      // zongji's rule: no character set (null) is binary; one not given (undefined) is UTF-8.
      if (column.charset === null) return lengthed(lengthBytes, (b, start, end) => b.subarray(start, end));
      const text = textDecoder(column.charset, charsets);
      return text && lengthed(lengthBytes, text);
    }
    case TYPE.VARCHAR_COMPRESSED:
    case TYPE.BLOB_COMPRESSED: {
      // MariaDB's COMPRESSED columns: each value in an envelope of its own, then as the plain type. A binary one is
      // left to zongji (it returns the bytes); text is read here so its character set is read as above.
      const varchar = column.type === TYPE.VARCHAR_COMPRESSED;
      const lengthBytes = varchar ? ((meta.max_length ?? 0) > 255 ? 2 : 1) : (meta.length_size ?? 0);
      const binary = varchar ? !/^(var)?char\(/.test(schema.COLUMN_TYPE) : column.charset === null;
      const text = binary || lengthBytes < 1 || lengthBytes > 4 ? undefined : textDecoder(column.charset, charsets);
      return (
        text &&
        lengthed(lengthBytes, (b, start, end) => {
          const value = uncompressed(b.subarray(start, end), reading?.maxValueBytes ?? Number.MAX_SAFE_INTEGER);
          return text(value, 0, value.length);
        })
      );
    }
    case TYPE.DATE:
      return dateText ? fixed(3, readDate) : undefined;
    case TYPE.DATETIME2:
      return dateText ? dateTimeReader(meta.decimals ?? 0) : undefined;
    case TYPE.TIMESTAMP2:
      return dateText && config.timezone === 'Z' ? timestampReader(meta.decimals ?? 0) : undefined;
    default:
      return undefined;
  }
}

function fixed(size: number, read: (buf: Buffer, at: number) => unknown): ColumnReader {
  return withSkip(
    (cursor) => {
      const value = read(cursor.buf, cursor.at);
      cursor.at += size;
      return value;
    },
    (cursor) => {
      cursor.at += size;
    },
  );
}

function lengthed(lengthBytes: number, read: (buf: Buffer, start: number, end: number) => unknown): ColumnReader {
  return withSkip(
    (cursor) => {
      const length = cursor.buf.readUIntLE(cursor.at, lengthBytes);
      const start = cursor.at + lengthBytes;
      cursor.at = start + length;
      return read(cursor.buf, start, cursor.at);
    },
    (cursor) => {
      cursor.at += lengthBytes + cursor.buf.readUIntLE(cursor.at, lengthBytes);
    },
  );
}

/**
 * Text in the column's character set: UTF-8 as is (undefined means UTF-8 to zongji); latin1 is MySQL's latin1,
 * Windows-1252 with its five unassigned bytes (0x81, 0x8D, 0x8F, 0x90, 0x9D) as the control characters of the same
 * number, which is how the server converts it for a query and so how a full sync reads it (zongji's codec made
 * those five U+FFFD, so a change read from the log differed from a copy of the same row). Undefined for other
 * character sets: zongji decodes them.
 */
function textDecoder(
  charset: string | null | undefined,
  charsets: ReadonlyMap<string, readonly string[]> | undefined,
): ((b: Buffer, start: number, end: number) => string) | undefined {
  if (charset === undefined || charset === 'utf8mb4' || charset === 'utf8mb3' || charset === 'utf8')
    return (b, start, end) => b.toString('utf8', start, end);
  const table = charset ? charsets?.get(charset) : undefined;
  if (table) return byTable(table);
  if (charset !== 'latin1') return undefined;
  // Read as ISO-8859-1 (the same but for 0x80–0x9F, which it reads as the C1 controls), then those mapped.
  return (b, start, end) => {
    const text = b.toString('latin1', start, end);
    // Most text has no byte in 0x80–0x9F: looked for in the bytes, cheaper than a replace that finds nothing.
    for (let i = start; i < end; i++) {
      const byte = b[i] as number;
      if (byte >= 0x80 && byte <= 0x9f) return text.replace(C1_CONTROLS, windows1252);
    }
    return text;
  };
}

const C1_CONTROLS = /[\x80-\x9f]/g;

/** Text in a single-byte character set, each byte by the server's table. */
function byTable(table: readonly string[]): (b: Buffer, start: number, end: number) => string {
  return (b, start, end) => {
    let text = '';
    for (let i = start; i < end; i++) text += table[b[i] as number] as string;
    return text;
  };
}

/**
 * MySQL's latin1 for 0x80–0x9F (strings/ctype-latin1.c): Windows-1252, with 0x81, 0x8D, 0x8F, 0x90 and 0x9D as the
 * controls of the same number. Written out because Node's TextDecoder reads 'windows-1252' as ISO-8859-1.
 */
const LATIN1_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';

const windows1252 = (control: string): string => LATIN1_HIGH[control.charCodeAt(0) - 0x80] as string;

/**
 * A MariaDB COMPRESSED column's value out of its envelope: a header byte (method in the high four bits: 0 stored, 8
 * zlib; then whether the stream is raw deflate, and how many bytes of original length follow), as zongji reads it.
 */
function uncompressed(value: Buffer, maxBytes: number): Buffer {
  if (value.length === 0) return value;
  const header = value[0] as number;
  const method = header >> 4;
  if (method === 0) return value.subarray(1);
  if (method !== 8) throw new Error(`a compressed column's value uses a method lake does not know (${method})`);
  const body = value.subarray(1 + (header & 0x07));
  // Bounded as a row is: a few bytes of the log may inflate to gigabytes.
  const options = { maxOutputLength: Math.min(maxBytes, buffer.kMaxLength) };
  try {
    return header & 0x08 ? inflateRawSync(body, options) : inflateSync(body, options);
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new Error(
        `a compressed value of a changed row inflates past ${maxBytes} bytes, the longest a sync takes (LAKE_SYNC_MAX_RECORD_BYTES)`,
      );
    throw error;
  }
}

/** Unsigned 64-bit: a number up to 2^53 − 1, the exact digits beyond (zongji's parseUInt64). */
function readUnsigned64(b: Buffer, at: number): number | string {
  const high = b.readUInt32LE(at + 4);
  if (high >>> 21 === 0) return high * 0x1_0000_0000 + b.readUInt32LE(at);
  return b.readBigUInt64LE(at).toString();
}

/** Signed 64-bit: a number within ±(2^53 − 1), the exact digits beyond. */
function readSigned64(b: Buffer, at: number): number | string {
  const high = b.readUInt32LE(at + 4);
  if (high >>> 21 === 0) return high * 0x1_0000_0000 + b.readUInt32LE(at);
  const value = b.readBigInt64LE(at);
  return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function validDecimal(precision: number | undefined, scale: number | undefined): boolean {
  return (
    Number.isInteger(precision) &&
    Number.isInteger(scale) &&
    (precision as number) >= 1 &&
    (precision as number) <= 65 &&
    (scale as number) >= 0 &&
    (scale as number) <= Math.min(30, precision as number)
  );
}

/** Bytes of a DECIMAL group of 0–9 digits (MySQL's dig2bytes). */
const GROUP_BYTES = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4] as const;

/**
 * A DECIMAL(precision, scale) as its exact digits: groups of nine digits in four big-endian bytes, a shorter leading
 * and trailing group, the sign in the first bit and a negative number's bits all flipped (zongji's parseNewDecimal).
 */
function decimalReader(precision: number, scale: number): ColumnReader {
  const integral = precision - scale;
  const wholeIntegral = Math.floor(integral / 9);
  const wholeFraction = Math.floor(scale / 9);
  const leadDigits = integral - wholeIntegral * 9;
  const tailDigits = scale - wholeFraction * 9;
  const leadBytes = GROUP_BYTES[leadDigits] as number;
  const tailBytes = GROUP_BYTES[tailDigits] as number;
  const size = leadBytes + wholeIntegral * 4 + wholeFraction * 4 + tailBytes;
  const skip = (cursor: Cursor): void => {
    cursor.at += size;
  };
  return withSkip((cursor) => {
    const { buf, at } = cursor;
    if (at + size > buf.length) throw new RangeError('a DECIMAL value runs past the end of its event');
    cursor.at += size;
    const positive = ((buf[at] as number) & 0x80) !== 0;
    const mask = positive ? 0 : -1;
    let pos = at;
    // The integral digits without leading zeros: groups of zero before the first other are left out, that one is
    // written as it is, and the ones after it padded to nine digits.
    let whole = '';
    if (leadBytes > 0) {
      const lead = group(buf, pos, leadBytes, at) ^ mask;
      if (lead !== 0) whole = String(lead);
      pos += leadBytes;
    }
    for (let i = 0; i < wholeIntegral; i++, pos += 4) {
      const value = group(buf, pos, 4, at) ^ mask;
      if (whole !== '') whole += pad(value, 9);
      else if (value !== 0) whole = value > 0 && value < 1e9 ? String(value) : pad(value, 9).replace(/^0+(?=\d)/, '');
    }
    const digits = whole === '' ? '0' : whole;
    if (scale === 0) return positive ? digits : `-${digits}`;
    let fraction = '';
    for (let i = 0; i < wholeFraction; i++, pos += 4) fraction += pad(group(buf, pos, 4, at) ^ mask, 9);
    if (tailBytes > 0) fraction += pad(group(buf, pos, tailBytes, at) ^ mask, tailDigits);
    return `${positive ? '' : '-'}${digits}.${fraction}`;
  }, skip);
}

/**
 * A big-endian signed group of a DECIMAL's bytes, read where it lies (no copy), with the sign bit of the value's first
 * byte (at `first`) flipped as the format stores it.
 */
function group(buf: Buffer, at: number, bytes: number, first: number): number {
  let value = 0;
  for (let j = 0; j < bytes; j++) value = value * 256 + ((buf[at + j] as number) ^ (at + j === first ? 0x80 : 0));
  const top = 2 ** (8 * bytes - 1);
  return value >= top ? value - 2 * top : value;
}

/** A DATE: day, month and year packed into three little-endian bytes. */
function readDate(b: Buffer, at: number): string {
  const raw = b.readUIntLE(at, 3);
  return dateText(bits(raw, 9, 24), bits(raw, 5, 9), bits(raw, 0, 5));
}

/** DATETIME(n): 40 bits of year×13+month, day, hour, minute, second, then the fraction (zongji's DATETIME2). */
function dateTimeReader(decimals: number): ColumnReader {
  const size = 5 + Math.ceil(decimals / 2);
  const skip = (cursor: Cursor): void => {
    cursor.at += size;
  };
  return withSkip((cursor) => {
    const { buf, at } = cursor;
    const high = buf.readInt32BE(at);
    const low = buf.readInt32BE(at + 1);
    cursor.at = at + 5;
    const yearMonth = bits(high, 14, 31);
    const fraction = fractionText(readFraction(cursor, decimals), decimals);
    // Hour, minute and second are 5 and 6 bits: below 100, so each is its two digits as they are.
    return `${dateText(Math.floor(yearMonth / 13), yearMonth % 13, bits(low, 17, 22))} ${TWO_DIGITS[bits(low, 12, 17)] as string}:${TWO_DIGITS[bits(low, 6, 12)] as string}:${TWO_DIGITS[bits(low, 0, 6)] as string}${fraction}`;
  }, skip);
}

/** TIMESTAMP(n): seconds since the epoch, big-endian, then the fraction; MySQL's zero TIMESTAMP is the epoch. */
function timestampReader(decimals: number): ColumnReader {
  const size = 4 + Math.ceil(decimals / 2);
  const skip = (cursor: Cursor): void => {
    cursor.at += size;
  };
  return withSkip((cursor) => {
    const seconds = cursor.buf.readInt32BE(cursor.at);
    cursor.at += 4;
    const value = readFraction(cursor, decimals);
    const fraction = fractionText(value, decimals);
    if (seconds === 0 && value === 0) return `0000-00-00 00:00:00${fraction}`;
    const time = new Date(seconds * 1000 + fractionMilliseconds(value, decimals));
    return `${dateText(time.getUTCFullYear(), time.getUTCMonth() + 1, time.getUTCDate())} ${pad(time.getUTCHours(), 2)}:${pad(time.getUTCMinutes(), 2)}:${pad(time.getUTCSeconds(), 2)}${fraction}`;
  }, skip);
}

/**
 * The stored fraction of a second of a temporal value with `decimals` digits (none: 0): big-endian, a digit more
 * than asked for when `decimals` is odd, never negative.
 */
function readFraction(cursor: Cursor, decimals: number): number {
  if (decimals === 0) return 0;
  const size = Math.ceil(decimals / 2);
  let value = cursor.buf.readIntBE(cursor.at, size);
  cursor.at += size;
  if (decimals % 2 !== 0) value /= 10;
  return value < 0 ? -value : value;
}

/** A fraction as `.ddd` (empty for none). */
function fractionText(value: number, decimals: number): string {
  return decimals === 0 ? '' : `.${pad(value, decimals)}`;
}

function fractionMilliseconds(value: number, decimals: number): number {
  if (decimals > 3) return Math.floor(value / 10 ** (decimals - 3));
  return decimals < 3 ? value * 10 ** (3 - decimals) : value;
}

/** The last date made and its text: a log's changes often fall on one day, and one date's text is made once. */
let lastDate = { year: -1, month: -1, day: -1, text: '' };

function dateText(year: number, month: number, day: number): string {
  if (year === lastDate.year && month === lastDate.month && day === lastDate.day) return lastDate.text;
  const text = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
  lastDate = { year, month, day, text };
  return text;
}

/** Bits start…end−1 of a 32-bit value (zongji's sliceBits, the same arithmetic). */
function bits(value: number, start: number, end: number): number {
  return (value & (((1 << end) - 1) ^ ((1 << start) - 1))) >> start;
}

/** The last `size` characters of the number zero-padded (zongji's zeroPad), without its 32-character string. */
function pad(value: number, size: number): string {
  if (size === 2 && value >= 0 && value < 100 && Number.isInteger(value)) return TWO_DIGITS[value] as string;
  const text = String(value);
  if (text.length === size) return text;
  if (text.length < size) return text.padStart(size, '0');
  return text.slice(text.length - size);
}
