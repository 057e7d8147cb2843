import type * as Arrow from 'apache-arrow';

/**
 * apache-arrow's type ids (its `Type` enum, a const enum the package's types do not let a value import reach) of the
 * columns joined here: fixed width (each row one value, or `stride` values, in `values`), bits (Bool), and text or
 * bytes with 32-bit offsets.
 */
const TYPE = {
  Int: 2,
  Float: 3,
  Binary: 4,
  Utf8: 5,
  Bool: 6,
  Decimal: 7,
  Date: 8,
  Time: 9,
  Timestamp: 10,
  Interval: 11,
  FixedSizeBinary: 15,
  Duration: 18,
} as const;

const FIXED_WIDTH = new Set<number>([
  TYPE.Int,
  TYPE.Float,
  TYPE.Decimal,
  TYPE.Date,
  TYPE.Time,
  TYPE.Timestamp,
  TYPE.Interval,
  TYPE.FixedSizeBinary,
  TYPE.Duration,
]);

/** The most bytes a column's 32-bit offsets can address. */
const MAX_OFFSET = 2 ** 31 - 1;

type AnyData = Arrow.Data;

/**
 * Several record batches of one schema as one: each column's buffers copied one after another (offsets rebased,
 * validity bits moved to their new rows). Undefined when a column is of a type not joined here (nested types,
 * 64-bit offsets, views) or a batch is a slice of another's buffers: the batches are then written as they are.
 */
export function concatBatches(
  arrow: typeof Arrow,
  batches: readonly Arrow.RecordBatch[],
): Arrow.RecordBatch | undefined {
  const first = batches[0];
  if (!first || batches.length === 1) return first;
  const columns: AnyData[] = [];
  for (let position = 0; position < first.schema.fields.length; position++) {
    const joined = concatData(
      arrow,
      batches.map((batch) => batch.data.children[position] as AnyData),
    );
    if (!joined) return undefined;
    columns.push(joined);
  }
  const length = batches.reduce((sum, batch) => sum + batch.numRows, 0);
  return new arrow.RecordBatch(
    first.schema,
    arrow.makeData({ type: new arrow.Struct(first.schema.fields), length, nullCount: 0, children: columns }),
  );
}

function concatData(arrow: typeof Arrow, parts: readonly AnyData[]): AnyData | undefined {
  const first = parts[0] as AnyData;
  const typeId = first.type.typeId as number;
  if (parts.some((part) => part.offset !== 0 || (part.type.typeId as number) !== typeId)) return undefined;
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  const nullCount = parts.reduce((sum, part) => sum + part.nullCount, 0);
  const nullBitmap = nullCount > 0 ? joinedBits(parts, (part) => part.nullBitmap, true) : undefined;
  const common = { type: first.type, length, nullCount, ...(nullBitmap ? { nullBitmap } : {}) };
  if (FIXED_WIDTH.has(typeId)) {
    const stride = first.stride;
    // Typed as bytes for the compiler; each part's values are an array of the type's own kind (BigInt64Array, …).
    const Values = (first.values as Uint8Array).constructor as new (length: number) => Uint8Array;
    const values = new Values(length * stride);
    let at = 0;
    for (const part of parts) {
      values.set((part.values as Uint8Array).subarray(0, part.length * stride), at);
      at += part.length * stride;
    }
    return arrow.makeData({ ...common, data: values } as never);
  }
  if (typeId === TYPE.Bool)
    return arrow.makeData({ ...common, data: joinedBits(parts, (part) => part.values as Uint8Array, false) } as never);
  if (typeId === TYPE.Utf8 || typeId === TYPE.Binary) {
    const bytes = parts.reduce((sum, part) => sum + textBytes(part), 0);
    if (bytes > MAX_OFFSET) return undefined;
    const offsets = new Int32Array(length + 1);
    const values = new Uint8Array(bytes);
    let row = 0;
    let base = 0;
    for (const part of parts) {
      const partOffsets = part.valueOffsets as Int32Array;
      const start = partOffsets[0] as number;
      for (let i = 1; i <= part.length; i++) offsets[row + i] = base + (partOffsets[i] as number) - start;
      values.set((part.values as Uint8Array).subarray(start, partOffsets[part.length] as number), base);
      row += part.length;
      base += textBytes(part);
    }
    return arrow.makeData({ ...common, valueOffsets: offsets, data: values } as never);
  }
  return undefined;
}

function textBytes(part: AnyData): number {
  const offsets = part.valueOffsets as Int32Array;
  return (offsets[part.length] as number) - (offsets[0] as number);
}

/**
 * The parts' bits (validity or Bool values) one after another. A part without a validity bitmap has every row
 * valid (`missingIsSet`).
 */
function joinedBits(
  parts: readonly AnyData[],
  bitsOf: (part: AnyData) => Uint8Array | null | undefined,
  missingIsSet: boolean,
): Uint8Array {
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  const joined = new Uint8Array((length + 7) >> 3);
  let row = 0;
  for (const part of parts) {
    const bits = bitsOf(part);
    for (let i = 0; i < part.length; i++, row++) {
      const set = bits && bits.length > 0 ? ((bits[i >> 3] as number) >> (i & 7)) & 1 : missingIsSet ? 1 : 0;
      if (set) joined[row >> 3] = (joined[row >> 3] as number) | (1 << (row & 7));
    }
  }
  return joined;
}
