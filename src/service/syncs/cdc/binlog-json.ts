/**
 * MySQL 8's JSON columns arrive in the binary log in MySQL's binary JSON form, which zongji decodes by following each
 * container's offsets to its members. Nothing in the form stops two members from pointing at the same bytes, and
 * zongji follows them all: a document of a few hundred bytes whose arrays each hold one array twice decodes to 2^depth
 * values, holding a process's only thread for hours and its memory for good. MySQL never writes a value twice (each
 * has bytes of its own, so a document of n bytes has fewer than n values); only a server that lies sends one. Before
 * zongji decodes a document, it is walked as zongji would walk it, counting each value and each byte of text it
 * would read, and refused once that passes what a document of its length can hold, or nests deeper than MySQL's
 * limit of 100.
 */

const SMALL_OBJECT = 0x00;
const LARGE_OBJECT = 0x01;
const SMALL_ARRAY = 0x02;
const LARGE_ARRAY = 0x03;
const INT32 = 0x07;
const UINT32 = 0x08;
const INT64 = 0x09;
const UINT64 = 0x0a;
const DOUBLE = 0x0b;
const STRING = 0x0c;
const OPAQUE = 0x0f;

/** MySQL's own bound on a JSON document's nesting (json_binary: JSON_DOCUMENT_MAX_DEPTH). */
const MAX_DEPTH = 100;

class BinaryJsonRefused extends Error {}

const refused = (): BinaryJsonRefused =>
  new BinaryJsonRefused(
    'a JSON value of a changed row is not a binary JSON document MySQL writes (its parts refer to each other or lie outside it); the log cannot be read',
  );

/**
 * Checks that decoding `doc` reads no more than it holds: each value and each byte of a key, string or opaque value
 * counts, and the count may not pass twice the document's length (a document MySQL wrote counts less than its length).
 */
export function checkBinaryJson(doc: Buffer): void {
  if (doc.length === 0) return;
  let budget = 2 * doc.length;
  const spend = (amount: number): void => {
    budget -= amount;
    if (budget < 0) throw refused();
  };
  const byteAt = (at: number): number => {
    const value = doc[at];
    if (value === undefined) throw refused();
    return value;
  };
  const uintAt = (at: number, large: boolean): number => {
    if (at < 0 || at + (large ? 4 : 2) > doc.length) throw refused();
    return large ? doc.readUInt32LE(at) : doc.readUInt16LE(at);
  };
  const within = (at: number, length: number): void => {
    if (at < 0 || at + length > doc.length) throw refused();
  };
  /** A variable-length length (7 bits a byte, low first) at `at`: the length and how many bytes it took. */
  const lengthAt = (at: number): [number, number] => {
    let length = 0;
    for (let i = 0; i < 5; i++) {
      const byte = byteAt(at + i);
      length += (byte & 0x7f) * 2 ** (7 * i);
      if ((byte & 0x80) === 0) return [length, i + 1];
    }
    throw refused();
  };
  // The value whose type byte is at `offset`, in a container whose own offset is `parent` (as zongji reads it).
  const visit = (offset: number, parent: number, parentLarge: boolean, depth: number): void => {
    spend(1);
    if (depth > MAX_DEPTH) throw refused();
    const type = byteAt(offset);
    const at = (): number => (offset === 0 ? 0 : uintAt(offset + 1, parentLarge) + parent);
    switch (type) {
      case SMALL_OBJECT:
      case LARGE_OBJECT:
      case SMALL_ARRAY:
      case LARGE_ARRAY: {
        const container = at();
        const large = type === LARGE_OBJECT || type === LARGE_ARRAY;
        const size = large ? 4 : 2;
        const count = uintAt(container + 1, large);
        const keys = container + 1 + 2 * size;
        const isObject = type === SMALL_OBJECT || type === LARGE_OBJECT;
        const values = isObject ? keys + count * (size + 2) : keys;
        within(values, count * (size + 1));
        for (let i = 0; i < count; i++) {
          if (isObject) {
            const entry = keys + i * (size + 2);
            const keyLength = uintAt(entry + size, false);
            within(container + 1 + uintAt(entry, large), keyLength);
            spend(keyLength);
          }
          visit(values + i * (size + 1), container, large, depth + 1);
        }
        return;
      }
      case INT32:
      case UINT32:
        // Inline in a large container's entry, else at the offset (the root's: after its type byte).
        if (!parentLarge) within(at() + 1, 4);
        return;
      case INT64:
      case UINT64:
      case DOUBLE:
        within(at() + 1, 8);
        return;
      case STRING:
      case OPAQUE: {
        // Its length, then its bytes; an opaque value has its MySQL type's byte first.
        const start = at() + (type === OPAQUE ? 2 : 1);
        const [length, took] = lengthAt(start);
        within(start + took, length);
        spend(length);
        return;
      }
      default:
        // Inline literals and 16-bit numbers; a type zongji does not know, it refuses itself.
        return;
    }
  };
  visit(0, 0, false, 0);
}

/** Checks the JSON value at `at` of a row image: its length in `lengthBytes` bytes, then the document. */
export function checkJsonValue(image: Buffer, at: number, lengthBytes: number): void {
  if (at + lengthBytes > image.length) throw refused();
  const length = image.readUIntLE(at, lengthBytes);
  const start = at + lengthBytes;
  if (start + length > image.length) throw refused();
  checkBinaryJson(image.subarray(start, start + length));
}
