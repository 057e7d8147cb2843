import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  framingCheck,
  limitedReader,
  limitMessages,
  MAX_DISCOVERY_BYTES,
  messageBound,
} from '../../src/service/connectors/wire-limits.js';

const pgMessage = (type: string, length: number): Buffer => {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(length + 4, 1);
  return Buffer.concat([header, Buffer.alloc(length, 0x61)]);
};
const mysqlPacket = (length: number, seq: number): Buffer => {
  const header = Buffer.alloc(4);
  header.writeUIntLE(length, 0, 3);
  header[3] = seq;
  return Buffer.concat([header, Buffer.alloc(length, 0x61)]);
};
/** The bytes cut into pieces of `size`, as a socket may hand them on. */
const pieces = (bytes: Buffer, size: number): Buffer[] =>
  Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

describe('the framing check on what a server sends', () => {
  it('lets PostgreSQL messages up to the bound through, however the bytes are cut', () => {
    const stream = Buffer.concat([pgMessage('T', 40), pgMessage('D', 1000), pgMessage('C', 10), pgMessage('Z', 1)]);
    for (const size of [1, 2, 3, 4, 5, 7, 64, stream.length]) {
      const fits = framingCheck('postgres', 1005);
      expect(pieces(stream, size).every((piece) => fits(piece) === 'fits')).toBe(true);
    }
  });

  it('stops at the header of a PostgreSQL message announced longer than the bound, before its body', () => {
    const fits = framingCheck('postgres', 1 << 20);
    expect(fits(pgMessage('Z', 1))).toBe('fits');
    const header = Buffer.alloc(5);
    header.write('D', 0, 'latin1');
    header.writeInt32BE(1536 << 20, 1);
    expect(fits(header.subarray(0, 3))).toBe('fits');
    expect(fits(header.subarray(3))).toBe('message');
    // Once over, it stays over.
    expect(fits(pgMessage('Z', 1))).toBe('message');
  });

  it('counts a MySQL row continued over 16 MiB parts as one message, and a new one after it', () => {
    const part = Buffer.alloc(4);
    part.writeUIntLE(0xffffff, 0, 3);
    // A row of two parts and an end: 16 MiB + 16 MiB + 10 bytes, headers included.
    const fitsLarge = framingCheck('mysql', 40 << 20);
    expect(fitsLarge(part)).toBe('fits');
    expect(fitsLarge(Buffer.alloc(0xffffff))).toBe('fits');
    expect(fitsLarge(part)).toBe('fits');
    expect(fitsLarge(Buffer.alloc(0xffffff))).toBe('fits');
    expect(fitsLarge(mysqlPacket(10, 3))).toBe('fits');
    // The next row starts from nothing.
    expect(fitsLarge(mysqlPacket(1000, 4))).toBe('fits');

    const fitsSmall = framingCheck('mysql', 20 << 20);
    expect(fitsSmall(part)).toBe('fits');
    expect(fitsSmall(Buffer.alloc(0xffffff))).toBe('fits');
    expect(fitsSmall(part)).toBe('message');
  });

  it("counts a PostgreSQL statement's rows until it is ready for the next, and stops past their bound", () => {
    const rows = (n: number): Buffer[] => Array.from({ length: n }, () => pgMessage('D', 95));
    const fits = framingCheck('postgres', 1000, 1000);
    // Ten rows of 100 bytes each, then the statement's end: the next statement starts from nothing.
    expect(fits(Buffer.concat([pgMessage('T', 20), ...rows(10), pgMessage('C', 9), pgMessage('Z', 1)]))).toBe('fits');
    expect(fits(Buffer.concat([pgMessage('T', 20), ...rows(10)]))).toBe('fits');
    expect(fits(Buffer.concat(rows(1)))).toBe('result');
  });

  it('lets many MySQL packets through, cut anywhere', () => {
    const stream = Buffer.concat(Array.from({ length: 50 }, (_, i) => mysqlPacket(100 + i * 7, i)));
    for (const size of [1, 3, 4, 5, 333]) {
      const fits = framingCheck('mysql', 500);
      expect(pieces(stream, size).every((piece) => fits(piece) === 'fits')).toBe(true);
    }
  });
});

describe('a catalog-only connection is bounded in all', () => {
  // 1 MiB MySQL packets and PostgreSQL rows, each short of the bound on one message: only the total stops them.
  const cases = [
    { protocol: 'mysql' as const, message: (i: number) => mysqlPacket(1 << 20, i % 256) },
    { protocol: 'postgres' as const, message: () => pgMessage('D', 1 << 20) },
  ];
  for (const { protocol, message } of cases)
    it(`${protocol}: ended past ${MAX_DISCOVERY_BYTES / 2 ** 20} MiB received, and not before; a sync's connection is not`, () => {
      const ended = (catalogOnly: boolean): number => {
        const stream = new PassThrough();
        stream.on('error', (error) => expect(error.message).toBe('the source sent more than a discovery reads'));
        let passed = 0;
        const bound = messageBound({}, { catalogOnly });
        // PostgreSQL's statement bound (260 MiB) is left out of this: a ReadyForQuery every 16 rows.
        if (protocol === 'postgres')
          stream.on(
            'data',
            limitedReader(stream, protocol, bound, () => passed++),
          );
        else limitMessages(stream, protocol, bound);
        let sent = 0;
        for (let i = 0; i < 100 && !stream.destroyed; i++) {
          stream.write(message(i));
          if (protocol === 'postgres' && i % 16 === 15) stream.write(pgMessage('Z', 1));
          sent++;
        }
        return stream.destroyed ? sent : -1;
      };
      expect(ended(true)).toBe(64);
      expect(ended(false)).toBe(-1);
    });
});
