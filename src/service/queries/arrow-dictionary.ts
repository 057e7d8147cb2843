import type * as Arrow from 'apache-arrow';

/** A dictionary stops growing here and starts again (a replacement), so its memory is bounded whatever the result. */
export const DICTIONARY_LIMITS = { entries: 1 << 20, bytes: 64 * 2 ** 20 };

/**
 * One text column's dictionary across a whole Arrow stream: each batch's strings become int32 indices, and the
 * strings not seen before are appended as a new chunk, which apache-arrow's writer sends as a delta dictionary batch.
 * Past DICTIONARY_LIMITS it starts afresh with a new first chunk, which the writer sends as a replacement.
 */
export class TextDictionary {
  /** Each value's index, keyed by its UTF-8 bytes read as latin1 (one character a byte: equal bytes, equal keys). */
  private indices = new Map<string, number>();
  private chunks: Arrow.Data<Arrow.Utf8>[] = [];
  private bytes = 0;

  constructor(
    private readonly arrow: typeof Arrow,
    private readonly limits = DICTIONARY_LIMITS,
  ) {}

  /** The batch's column as indices into this dictionary, which keeps the batch's values. */
  encode(column: Arrow.Data<Arrow.Utf8>, type: Arrow.Dictionary<Arrow.Utf8, Arrow.Int32>): Arrow.Data {
    const { length, valueOffsets, values, nullBitmap, nullCount } = column;
    if (this.indices.size + length > this.limits.entries || this.bytes + values.byteLength > this.limits.bytes) {
      this.indices = new Map();
      this.chunks = [];
      this.bytes = 0;
    }
    const text = Buffer.from(values.buffer, values.byteOffset, values.byteLength);
    const indices = new Int32Array(length);
    const added: Uint8Array[] = [];
    const addedEnds = [0];
    for (let row = 0; row < length; row++) {
      // A null's index is never read; 0 keeps it in range.
      if (nullCount > 0 && !column.getValid(row)) continue;
      // apache-arrow slices a column's offsets with it; only its validity bits keep the column's offset.
      const start = valueOffsets[row] ?? 0;
      const end = valueOffsets[row + 1] ?? start;
      const key = text.toString('latin1', start, end);
      let index = this.indices.get(key);
      if (index === undefined) {
        index = this.indices.size;
        this.indices.set(key, index);
        added.push(values.subarray(start, end));
        addedEnds.push((addedEnds.at(-1) ?? 0) + end - start);
      }
      indices[row] = index;
    }
    if (added.length > 0 || this.chunks.length === 0) this.chunks.push(this.chunk(added, addedEnds));
    return this.arrow.makeData({
      type,
      length,
      offset: column.offset,
      nullCount,
      nullBitmap,
      data: indices,
      dictionary: new this.arrow.Vector(this.chunks.slice()),
    });
  }

  /** The new strings as one Utf8 chunk. */
  private chunk(added: Uint8Array[], ends: number[]): Arrow.Data<Arrow.Utf8> {
    const data = new Uint8Array(ends.at(-1) ?? 0);
    added.forEach((value, i) => data.set(value, ends[i]));
    this.bytes += data.byteLength;
    return this.arrow.makeData({
      type: new this.arrow.Utf8(),
      length: added.length,
      nullCount: 0,
      valueOffsets: Int32Array.from(ends),
      data,
    });
  }
}
