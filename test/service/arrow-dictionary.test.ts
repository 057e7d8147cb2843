import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { TextDictionary } from '../../src/service/queries/arrow-dictionary.js';

const TYPE = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32(), 0);
const SCHEMA = new arrow.Schema([new arrow.Field('t', TYPE, true)]);

/** Each batch's strings through one dictionary, written as one IPC stream and read back. */
function roundTrip(batches: (string | null)[][], limits: { entries: number; bytes: number }, skip = 0) {
  const dictionary = new TextDictionary(arrow, limits);
  const sizes: number[] = [];
  const encoded = batches.map((values) => {
    // `skip` reads each batch's column as a slice of a longer one (apache-arrow keeps the offset then).
    const whole = arrow.vectorFromArray([...Array<string>(skip).fill('skipped'), ...values], new arrow.Utf8());
    const column = whole.slice(skip).data[0] as arrow.Data<arrow.Utf8>;
    const data = dictionary.encode(column, TYPE);
    sizes.push(data.dictionary?.length ?? 0);
    const struct = arrow.makeData({ type: new arrow.Struct(SCHEMA.fields), length: values.length, children: [data] });
    return new arrow.RecordBatch(SCHEMA, struct);
  });
  const writer = new arrow.RecordBatchStreamWriter();
  for (const batch of encoded) writer.write(batch);
  writer.finish();
  const read = arrow.tableFromIPC(writer.toUint8Array(true));
  return { values: [...(read.getChild('t') ?? [])], sizes };
}

describe('a text column as one dictionary across a stream', () => {
  it('grows by deltas: a value seen before keeps its index, a new one is appended; nulls stay null', () => {
    const { values, sizes } = roundTrip(
      [
        ['a', 'b', null, 'a'],
        ['b', 'c', 'a', null],
        ['', 'é🙂', 'c'],
      ],
      { entries: 100, bytes: 1000 },
    );
    expect(values).toEqual(['a', 'b', null, 'a', 'b', 'c', 'a', null, '', 'é🙂', 'c']);
    // The dictionary holds each value once, whichever batch brought it.
    expect(sizes).toEqual([2, 3, 5]);
  });

  it('holds thousands of entries (its table grows) and finds each value again, whatever its bytes', () => {
    // 6,000 distinct values over 30,000 rows, in a scrambled order: prefixes of one another, multi-byte, empty.
    const value = (n: number): string | null =>
      n % 997 === 0 ? null : n % 6000 === 1 ? '' : `${'é'.repeat(n % 3)}v${(n * 7919) % 6000}`;
    const batches = [0, 1, 2].map((b) => Array.from({ length: 10_000 }, (_, i) => value(b * 10_000 + i)));
    const { values, sizes } = roundTrip(batches, { entries: 100_000, bytes: 10_000_000 });
    expect(values).toEqual(batches.flat());
    expect(sizes.at(-1)).toBe(new Set(batches.flat().filter((v) => v !== null)).size);
  });

  it('takes a batch of nulls alone first, and columns that are slices of longer ones', () => {
    const batches = [
      [null, null],
      ['x', null, 'y'],
      [null, 'x'],
    ];
    expect(roundTrip(batches, { entries: 100, bytes: 1000 }).values).toEqual(batches.flat());
    const sliced = roundTrip(batches, { entries: 100, bytes: 1000 }, 3);
    expect(sliced.values).toEqual(batches.flat());
    expect(sliced.sizes).toEqual([0, 2, 2]);
  });

  it('starts afresh (a replacement) past its limits, so its memory is bounded, and reads back the same', () => {
    const batches = Array.from({ length: 6 }, (_, b) => Array.from({ length: 5 }, (_, i) => `v${b * 3 + i}`));
    const { values, sizes } = roundTrip(batches, { entries: 8, bytes: 1000 });
    expect(values).toEqual(batches.flat());
    expect(Math.max(...sizes)).toBeLessThanOrEqual(8);
    const byBytes = roundTrip(batches, { entries: 100, bytes: 12 });
    expect(byBytes.values).toEqual(batches.flat());
    expect(Math.max(...byBytes.sizes)).toBeLessThanOrEqual(10);
  });
});
