import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkBinaryJson, checkJsonValue } from '../../src/service/syncs/cdc/binlog-json.js';
import { useLakeRowImages } from '../../src/service/syncs/cdc/binlog-rows.js';
import { zongjiDriver } from '../../src/support/source-drivers.js';

/**
 * MySQL 8's binary JSON (sql/json_binary.h), as a JSON column's value arrives in the binary log, checked before
 * zongji decodes it: documents MySQL writes pass (and zongji decodes them to what was encoded), documents whose parts
 * point at each other are refused before zongji follows them. Documents are made here by the format's own rules.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A value as its container's entry holds it: inline (literals, 16-bit numbers) or its bytes, placed after. */
interface Encoded {
  type: number;
  inline?: number;
  data?: Buffer;
}

const u16 = (n: number): Buffer => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
};

function encode(value: Json): Encoded {
  if (value === null) return { type: 0x04, inline: 0 };
  if (value === true) return { type: 0x04, inline: 1 };
  if (value === false) return { type: 0x04, inline: 2 };
  if (typeof value === 'number') return { type: 0x05, inline: value & 0xffff };
  if (typeof value === 'string') {
    const bytes = Buffer.from(value);
    if (bytes.length > 127) throw new Error('the test encodes short strings only');
    return { type: 0x0c, data: Buffer.concat([Buffer.from([bytes.length]), bytes]) };
  }
  if (Array.isArray(value)) return container(0x02, undefined, value.map(encode));
  const keys = Object.keys(value);
  return container(
    0x00,
    keys,
    keys.map((key) => encode(value[key] as Json)),
  );
}

/** A small object or array: count, size, key entries, value entries, keys, then each member's bytes. */
function container(type: number, keys: string[] | undefined, members: Encoded[]): Encoded {
  const keyBytes = (keys ?? []).map((key) => Buffer.from(key));
  const entriesEnd = 4 + keyBytes.length * 4 + members.length * 3;
  const keysLength = keyBytes.reduce((sum, key) => sum + key.length, 0);
  let at = entriesEnd + keysLength;
  const keyEntries: Buffer[] = [];
  let keyAt = entriesEnd;
  for (const key of keyBytes) {
    keyEntries.push(Buffer.concat([u16(keyAt), u16(key.length)]));
    keyAt += key.length;
  }
  const valueEntries: Buffer[] = [];
  const tails: Buffer[] = [];
  for (const member of members) {
    if (member.data === undefined)
      valueEntries.push(Buffer.concat([Buffer.from([member.type]), u16(member.inline ?? 0)]));
    else {
      valueEntries.push(Buffer.concat([Buffer.from([member.type]), u16(at)]));
      tails.push(member.data);
      at += member.data.length;
    }
  }
  const data = Buffer.concat([u16(members.length), u16(at), ...keyEntries, ...valueEntries, ...keyBytes, ...tails]);
  return { type, data };
}

/** A whole document: the root's type, then its bytes. */
const documentOf = (value: Json): Buffer => {
  const root = encode(value);
  return Buffer.concat([Buffer.from([root.type]), root.data ?? Buffer.alloc(0)]);
};

/** Arrays `depth` deep, each holding the next one twice by offset (its bytes written once): 2^depth empty arrays. */
function sharedArrays(depth: number): Buffer {
  let data = Buffer.concat([u16(0), u16(4)]);
  for (let i = 0; i < depth; i++) {
    const entry = Buffer.concat([Buffer.from([0x02]), u16(10)]);
    data = Buffer.concat([u16(2), u16(10 + data.length), entry, entry, data]);
  }
  return Buffer.concat([Buffer.from([0x02]), data]);
}

let decodeJson: (doc: Buffer) => unknown;
let jsonToText: (value: unknown) => string;
/** A row image of one JSON column (MySQL 8's type 245), read by lake's row reader in zongji's write rows event. */
let readJsonRow: (doc: Buffer) => unknown;

beforeAll(async () => {
  const lib = join(dirname(createRequire(import.meta.url).resolve('@vlasky/zongji')), 'lib');
  const load = (file: string): Promise<Record<string, unknown>> =>
    import(pathToFileURL(join(lib, file)).href) as Promise<Record<string, unknown>>;
  const module = await load('json_decode.js');
  decodeJson = module.default as typeof decodeJson;
  jsonToText = module.jsonToText as typeof jsonToText;
  expect(await useLakeRowImages()).toBe(true);
  const { rowsEvent } = await zongjiDriver();
  const { Parser } = (await load('reader.js')) as { Parser: new () => { append(b: Buffer): void } };
  const writeRows = rowsEvent.WriteRows as { prototype: { _fetchOneRow(parser: unknown): unknown } };
  const table = {
    parentSchema: 'shop',
    tableName: 'docs',
    columns: [{ name: 'j', type: 245, charset: null, metadata: { length_size: 4 } }],
    columnSchemas: [{ COLUMN_TYPE: 'json' }],
  };
  const event = {
    tableId: 1,
    tableMap: { 1: table },
    columns_present_bitmap: Buffer.from([1]),
    _zongji: { connection: { config: { jsonStrings: true } } },
  };
  readJsonRow = (doc) => {
    const length = Buffer.alloc(4);
    length.writeUInt32LE(doc.length);
    const parser = new Parser();
    parser.append(Buffer.concat([Buffer.from([0]), length, doc]));
    return writeRows.prototype._fetchOneRow.call(event, parser);
  };
});

describe("a JSON column's value in the binary log", () => {
  const documents: Json[] = [
    { a: [1, 'x', null], b: { c: true, d: false }, e: '😀 Åke' },
    [[], {}, [[['deep']]], -5, 32767],
    { '': '' },
    [],
  ];

  it('passes as MySQL writes it, and zongji decodes it to what it holds', () => {
    for (const value of documents) {
      const doc = documentOf(value);
      expect(() => checkBinaryJson(doc)).not.toThrow();
      expect(decodeJson(doc)).toEqual(value);
    }
    // A DATE inside JSON (CAST(d AS JSON)): an opaque value, its MySQL type (10) and its 8 packed bytes.
    const packed = Buffer.alloc(8);
    packed.writeInt32LE(((2024 * 13 + 2) << 14) | (29 << 9), 4);
    const dated = container(0x00, ['d'], [{ type: 0x0f, data: Buffer.concat([Buffer.from([10, 8]), packed]) }]);
    const datedDoc = Buffer.concat([Buffer.from([dated.type]), dated.data as Buffer]);
    expect(() => checkBinaryJson(datedDoc)).not.toThrow();
    expect(decodeJson(datedDoc)).toEqual({ d: '2024-02-29' });
    // Nested to MySQL's limit of 100, and one past it.
    let deep: Json = 'bottom';
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(() => checkBinaryJson(documentOf(deep))).not.toThrow();
    expect(() => checkBinaryJson(documentOf([deep]))).toThrow(/not a binary JSON document MySQL writes/);
  });

  it('is refused when its arrays share members: zongji would decode 2^depth values from a few hundred bytes', () => {
    // Why: 12 levels are 125 bytes and decode to 4,096 arrays; 40 levels would be about 10^12.
    const small = sharedArrays(12);
    expect(small.length).toBe(125);
    expect(jsonToText(decodeJson(small)).match(/\[\]/g)).toHaveLength(4096);
    expect(() => checkBinaryJson(small)).toThrow(/refer to each other or lie outside it/);
    const started = performance.now();
    expect(() => checkBinaryJson(sharedArrays(40))).toThrow(/not a binary JSON document MySQL writes/);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('is refused when a member points at its own container, or outside the document', () => {
    // An array whose one member is itself (offset 0 from its own bytes' start): endless to follow.
    const itself = Buffer.concat([Buffer.from([0x02]), u16(1), u16(7), Buffer.from([0x02]), u16(0)]);
    expect(() => checkBinaryJson(itself)).toThrow(/not a binary JSON document/);
    const outside = Buffer.concat([Buffer.from([0x02]), u16(1), u16(7), Buffer.from([0x0c]), u16(60_000)]);
    expect(() => checkBinaryJson(outside)).toThrow(/not a binary JSON document/);
    const countPastTheEnd = Buffer.concat([Buffer.from([0x00]), u16(65_535), u16(4)]);
    expect(() => checkBinaryJson(countPastTheEnd)).toThrow(/not a binary JSON document/);
  });

  it("is checked as a changed row's column is read, before zongji decodes it", () => {
    expect(readJsonRow(documentOf({ k: ['v', 1] }))).toEqual({ j: '{"k": ["v", 1]}' });
    // 18 levels: 262,144 arrays zongji would build from 185 bytes (this small, so a reader without the check ends).
    expect(() => readJsonRow(sharedArrays(18))).toThrow(/not a binary JSON document MySQL writes/);
  });

  it('is read from the row image by its length first', () => {
    const doc = documentOf({ k: 'v' });
    const image = Buffer.concat([Buffer.from([0xaa]), Buffer.alloc(4), doc]);
    image.writeUInt32LE(doc.length, 1);
    expect(() => checkJsonValue(image, 1, 4)).not.toThrow();
    const bomb = sharedArrays(30);
    const bombImage = Buffer.concat([u16(bomb.length), bomb]);
    expect(() => checkJsonValue(bombImage, 0, 2)).toThrow(/not a binary JSON document/);
    // A length past the image's end.
    expect(() => checkJsonValue(Buffer.concat([u16(500), doc]), 0, 2)).toThrow(/not a binary JSON document/);
  });
});
