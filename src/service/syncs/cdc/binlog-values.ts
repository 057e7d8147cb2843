import type { ColumnPlan } from '../pg-types.js';
import { enumLabels, type MysqlColumn } from '../mysql-types.js';

/** A changed value that the column, as its lake table types it, cannot hold: the table must be read whole. */
export class BinlogFitError extends Error {}

/**
 * How one column's values in binary log row images (as @vlasky/zongji decodes them, with dateStrings and
 * jsonStrings) become the text a full sync stages for the same value (mysql-types.ts: MySQL's own text of it, or the
 * plan's staged form), so a change loads through the same column plan and reads exactly as a copy of the row would.
 * Null is NULL.
 */
export type BinlogValueReader = (value: unknown) => string | null;

export function binlogValueReader(column: MysqlColumn, plan: ColumnPlan): BinlogValueReader {
  const type = column.dataType.toLowerCase();
  const read = decodedValueReader(type, column, plan);
  // Most columns' text and numbers are staged as the decoder gives them: those skip the branches below (this runs
  // for every value of every change read from the log).
  const textAsIs =
    !['enum', 'set', 'timestamp', 'time'].includes(type) &&
    !((type === 'decimal' || type === 'numeric') && plan.lakeType.startsWith('DECIMAL(38,'));
  if (!textAsIs) return read;
  const numberAsIs = type !== 'year';
  return (value) =>
    typeof value === 'string'
      ? value
      : typeof value === 'number' && numberAsIs && !Object.is(value, -0)
        ? String(value)
        : read(value);
}

function decodedValueReader(type: string, column: MysqlColumn, plan: ColumnPlan): BinlogValueReader {
  const labels = type === 'enum' || type === 'set' ? labelsByDecoded(column.columnType) : undefined;
  return (value) => {
    // An ENUM's invalid value (index 0) decodes to no label: MySQL keeps it as ''.
    if (value === undefined) return type === 'enum' ? '' : null;
    if (value === null) return null;
    if (Buffer.isBuffer(value)) {
      // BIT(n): its bytes, big-endian, are the number a full sync reads (`b + 0`).
      if (type === 'bit') return value.length === 0 ? '0' : BigInt(`0x${value.toString('hex')}`).toString();
      return value.toString('hex').toUpperCase();
    }
    if (typeof value === 'number') {
      // YEAR 0000 is stored as 0, which the decoder reads as 1900 (not a YEAR MySQL can hold).
      if (type === 'year') return value === 1900 ? '0' : String(value);
      return Object.is(value, -0) ? '-0' : String(value);
    }
    const text = String(value);
    if (labels && type === 'enum') return labels.get(text) ?? text;
    // A SET's members never hold a comma (MySQL refuses one), so its text splits into them.
    if (labels)
      return text === ''
        ? ''
        : text
            .split(',')
            .map((member) => labels.get(member) ?? member)
            .join(',');
    if (type === 'decimal' || type === 'numeric') return fitDecimal(plan, text);
    // The epoch itself is MySQL's zero TIMESTAMP (the type begins a second later): no time, as in a full sync.
    if (type === 'timestamp') return /^1970-01-01 00:00:00(\.0*)?$/.test(text) ? '0000-00-00 00:00:00' : text;
    if (type === 'time') return timeMicroseconds(text);
    return text;
  };
}

/**
 * An ENUM's or SET's labels by the text the decoder gives for them. Without the log's own column metadata
 * (binlog_row_metadata=FULL, off by default) the decoder splits COLUMN_TYPE at every comma and keeps quotes doubled,
 * so `it''s` or `'a` stand for the label at that position: mapped back by position to the labels as declared.
 */
function labelsByDecoded(columnType: string): Map<string, string> {
  const body = /^(?:enum|set)\((.*)\)$/is.exec(columnType)?.[1] ?? '';
  const decoded = body.split(',').map((part) => (part[0] === "'" || part[0] === '"' ? part.slice(1, -1) : part));
  const declared = enumLabels(`enum(${body})`);
  const labels = new Map<string, string>();
  decoded.forEach((text, i) => {
    if (!labels.has(text) && declared[i] !== undefined) labels.set(text, declared[i]);
  });
  return labels;
}

/** A DECIMAL's digits, checked against the lake type of a column wider than 38 digits (DECIMAL(38,s)). */
function fitDecimal(plan: ColumnPlan, text: string): string {
  const narrowed = /^DECIMAL\(38,(\d+)\)$/.exec(plan.lakeType);
  if (!narrowed) return text;
  const whole = (text.replace(/^-/, '').split('.')[0] ?? '').replace(/^0+/, '');
  if (whole.length > 38 - Number(narrowed[1]))
    throw new BinlogFitError(`a changed value of ${plan.name} does not fit its column's lake type ${plan.lakeType}`);
  return text;
}

/** `-838:59:59.5` as the signed microseconds a TIME column's plan stages (csvType BIGINT). */
function timeMicroseconds(text: string): string {
  const match = /^(-?)(\d+):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/.exec(text);
  if (!match) throw new Error(`a TIME value the binary log holds could not be read (${text.length} characters)`);
  const [, sign, hours, minutes, seconds, fraction] = match;
  const micros =
    ((BigInt(hours as string) * 60n + BigInt(minutes as string)) * 60n + BigInt(seconds as string)) * 1_000_000n +
    BigInt((fraction ?? '').padEnd(6, '0'));
  return `${sign === '-' && micros !== 0n ? '-' : ''}${micros}`;
}
