import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { concatBatches } from '../../src/service/queries/arrow-concat.js';

/** A record batch of the given columns, each made by apache-arrow from values (nulls where null). */
function batch(columns: Record<string, { values: unknown[]; type: arrow.DataType }>): arrow.RecordBatch {
  const vectors = Object.fromEntries(
    Object.entries(columns).map(([name, { values, type }]) => [name, arrow.vectorFromArray(values, type)]),
  );
  return new arrow.Table(vectors).batches[0] as arrow.RecordBatch;
}

const rows = (b: arrow.RecordBatch): unknown[] => [...new arrow.Table([b])].map((row) => row.toJSON());

describe('record batches joined into one', () => {
  it('keeps every value and every null where it was, at row counts that are not whole bytes', () => {
    const make = (start: number, count: number): arrow.RecordBatch => {
      const ids = Array.from({ length: count }, (_, i) => start + i);
      return batch({
        i: { values: ids.map((n) => (n % 3 === 0 ? null : n)), type: new arrow.Int32() },
        big: { values: ids.map((n) => BigInt(n) * 1_000_000_007n), type: new arrow.Int64() },
        f: { values: ids.map((n) => (n % 4 === 0 ? null : n / 7)), type: new arrow.Float64() },
        ok: { values: ids.map((n) => (n % 5 === 0 ? null : n % 2 === 0)), type: new arrow.Bool() },
        t: { values: ids.map((n) => (n % 6 === 0 ? null : `${'é'.repeat(n % 3)}v${n}`)), type: new arrow.Utf8() },
        day: { values: ids.map((n) => new Date(Date.UTC(2024, 0, 1 + n))), type: new arrow.DateDay() },
        at: { values: ids.map((n) => (n % 2 ? null : 1_700_000_000_000 + n)), type: new arrow.TimestampMillisecond() },
      });
    };
    const parts = [make(0, 5), make(5, 7), make(12, 1), make(13, 11)];
    const joined = concatBatches(arrow, parts);
    expect(joined?.numRows).toBe(24);
    expect(rows(joined as arrow.RecordBatch)).toEqual(parts.flatMap(rows));
    expect(joined?.getChild('i')?.nullCount).toBe(parts.reduce((n, p) => n + (p.getChild('i')?.nullCount ?? 0), 0));
  });

  it('joins decimals and fixed-size bytes by their width, and text of batches read as slices of a buffer', () => {
    const decimal = new arrow.Decimal(2, 38, 128);
    const fixed = new arrow.FixedSizeBinary(3);
    const make = (start: number): arrow.RecordBatch => {
      const words = (n: number): Uint32Array => new Uint32Array([n, 0, 0, n % 2 ? 0xffffffff : 0]);
      const decimals = arrow.makeData({
        type: decimal,
        length: 3,
        nullCount: 0,
        data: new Uint32Array([...words(start), ...words(start + 1), ...words(start + 2)]),
      });
      const bytes = arrow.makeData({
        type: fixed,
        length: 3,
        nullCount: 0,
        data: Uint8Array.from({ length: 9 }, (_, i) => start + i),
      });
      const schema = new arrow.Schema([new arrow.Field('d', decimal), new arrow.Field('b', fixed)]);
      return new arrow.RecordBatch(
        schema,
        arrow.makeData({ type: new arrow.Struct(schema.fields), length: 3, children: [decimals, bytes] }),
      );
    };
    const parts = [make(10), make(20)];
    const joined = concatBatches(arrow, parts) as arrow.RecordBatch;
    expect([...(joined.getChild('d')?.data[0]?.values as Uint32Array)]).toEqual(
      parts.flatMap((p) => [...(p.getChild('d')?.data[0]?.values as Uint32Array)]),
    );
    expect([...(joined.getChild('b') ?? [])].map((v) => [...(v as Uint8Array)])).toEqual(
      parts.flatMap((p) => [...(p.getChild('b') ?? [])].map((v) => [...(v as Uint8Array)])),
    );
  });

  it('leaves batches it cannot join as they are: nested columns, or a batch that is a slice of another', () => {
    const nested = (n: number): arrow.RecordBatch =>
      batch({ l: { values: [[n], [n, n]], type: new arrow.List(new arrow.Field('item', new arrow.Int32())) } });
    expect(concatBatches(arrow, [nested(1), nested(2)])).toBeUndefined();
    const whole = batch({ i: { values: [1, 2, 3, 4], type: new arrow.Int32() } });
    expect(concatBatches(arrow, [whole.slice(1, 3), whole])).toBeUndefined();
    expect(concatBatches(arrow, [whole])).toBe(whole);
  });
});
