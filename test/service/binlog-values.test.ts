import { describe, expect, it } from 'vitest';
import { binlogValueReader, BinlogFitError } from '../../src/service/syncs/cdc/binlog-values.js';
import { planMysqlColumn, type MysqlColumn } from '../../src/service/syncs/mysql-types.js';

/**
 * How a value decoded from a binary log row image becomes the text a full sync stages for it. Most columns take the
 * decoder's text and numbers as they are (a path of their own, taken for every value of every change); these cases
 * are the ones where that path must not be taken, and the ones where it must give exactly the general answer.
 */
const column = (columnType: string, collation: string | null = null): MysqlColumn => ({
  name: 'c',
  columnType,
  dataType: columnType.replace(/\(.*$/, '').replace(/ unsigned$/, ''),
  collation,
  json: false,
  notNull: false,
});
const reader = (columnType: string, wide: Map<string, number> = new Map()) => {
  const c = column(columnType, /char|text|enum|set/.test(columnType) ? 'utf8mb4_general_ci' : null);
  return binlogValueReader(c, planMysqlColumn(c, wide));
};

describe('a binary log value as staged text', () => {
  it('stages text, dates and numbers as the decoder gives them, NULL as null', () => {
    expect(reader('varchar(10)')('a "b"')).toBe('a "b"');
    expect(reader('varchar(10)')('')).toBe('');
    expect(reader('varchar(10)')(null)).toBeNull();
    expect(reader('varchar(10)')(undefined)).toBeNull();
    expect(reader('datetime(3)')('2024-01-01 00:00:01.500')).toBe('2024-01-01 00:00:01.500');
    expect(reader('bigint(20)')(9007199254740991)).toBe('9007199254740991');
    expect(reader('bigint(20)')('9223372036854775807')).toBe('9223372036854775807');
    expect(reader('double')(1.5e300)).toBe('1.5e+300');
    expect(reader('decimal(12,2)')('-0.01')).toBe('-0.01');
  });

  it('keeps the sign of a negative zero, and YEAR 0000 (decoded as 1900) as 0', () => {
    expect(reader('double')(-0)).toBe('-0');
    expect(reader('float')(0)).toBe('0');
    expect(reader('year(4)')(1900)).toBe('0');
    expect(reader('year(4)')(2024)).toBe('2024');
  });

  it('maps enum and set text to the declared labels, and an invalid enum to an empty string', () => {
    expect(reader("enum('a','it''s')")("it''s")).toBe("it's");
    expect(reader("enum('a','b')")(undefined)).toBe('');
    expect(reader("set('x','y')")('x,y')).toBe('x,y');
  });

  it('turns TIME into microseconds and the epoch TIMESTAMP into the zero one', () => {
    expect(reader('time(2)')('-838:59:59.5')).toBe('-3020399500000');
    expect(reader('timestamp')('1970-01-01 00:00:00')).toBe('0000-00-00 00:00:00');
    expect(reader('timestamp')('2024-01-01 00:00:00')).toBe('2024-01-01 00:00:00');
  });

  it('checks a DECIMAL wider than 38 digits against the lake type its copy chose', () => {
    const narrowed = reader('decimal(65,30)', new Map([['c', 8]]));
    expect(narrowed('12345678.5')).toBe('12345678.5');
    expect(() => narrowed('123456789.5')).toThrow(BinlogFitError);
  });

  it('reads bytes as hex, and BIT as its number', () => {
    expect(reader('varbinary(4)')(Buffer.from([0, 255]))).toBe('00FF');
    expect(reader('bit(10)')(Buffer.from([2, 170]))).toBe('682');
  });
});
