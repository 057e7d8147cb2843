import { randomInt } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWith, rowImagesRead, useLakeRowImages, type RowReading } from '../../src/service/syncs/cdc/binlog-rows.js';
import { unreadableEvents } from '../../src/service/syncs/cdc/binlog-read.js';
import { startPrivateMariadb, type PrivateMariadb } from '../helpers/mysql.js';

/**
 * Lake's reader of binary log row images against @vlasky/zongji's own: one log of every column family, with edge
 * values, NULLs, updates and deletes, read by zongji as it decodes rows, then again with lake's reader in its place;
 * every row image must come out the same (types lake does not read itself go through zongji's own code either way).
 */
let server: PrivateMariadb;

const TABLE = `CREATE TABLE t (
  id int PRIMARY KEY, ti tinyint, tu tinyint unsigned, si smallint, su smallint unsigned, mi mediumint,
  mu mediumint unsigned, i int, iu int unsigned, bi bigint, bu bigint unsigned, f float, d double,
  d1 decimal(65,30), d2 decimal(10,2), d3 decimal(5,0), d4 decimal(18,9), d5 decimal(4,4), d6 decimal(27,0),
  c char(5), vc varchar(300), vl varchar(20) CHARACTER SET latin1, cl char(3) CHARACTER SET latin1,
  vb varbinary(10), bn binary(4), tt tinytext, tx text, mt mediumtext CHARACTER SET latin1, lt longtext,
  bl blob, lb longblob, dt date, t0 datetime, t3 datetime(3), t6 datetime(6), t1 datetime(1),
  s0 timestamp NULL DEFAULT NULL, s3 timestamp(3) NULL DEFAULT NULL, s6 timestamp(6) NULL DEFAULT NULL,
  tm time(2), e enum('a','b','it''s'), st set('x','y','z'), bt bit(10), y year, j json, u uuid
) CHARACTER SET utf8mb4`;

const ROWS = `
  (1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808,
   18446744073709551615, -1.5e-30, 1.7976931348623157e308,
   '-12345678901234567890123456789012345.123456789012345678901234567890', -0.01, 0, -123456789.123456789, 0.9999,
   -999999999999999999999999999,
   'ab  ', '😀 Åke ß', 'café', 'é', x'00ff10', x'0102', 'tiny', 'a "quoted", text', 'Mötley', REPEAT('x', 3000),
   x'00ff', x'deadbeef', '0000-00-00', '0000-00-00 00:00:00', '1000-01-01 00:00:00.001', '9999-12-31 23:59:59.999999',
   '2024-02-29 12:00:00.5', '1970-01-01 00:00:01', '2038-01-19 03:14:07.999', '2000-06-15 08:09:10.000001',
   '-838:59:59', 'it''s', 'x,z', b'1010101010', 2155, '{"a": [1, 2.5, "x"], "b": null}', '00112233-4455-6677-8899-aabbccddeeff'),
  (2, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 9007199254740993, 3.25, -0.0,
   '99999999999999999999999999999999999.999999999999999999999999999999', 99999999.99, -99999, 0.000000001, -0.0001,
   0,
   '', '', '', '', '', x'00000000', '', '', '', '', '', '', '2024-00-10', '2024-02-29 23:59:59',
   '2024-01-01 00:00:00', '2024-01-01 00:00:00', '2024-01-01 00:00:00', NULL, NULL, NULL,
   '838:59:59.99', 'a', '', b'0', 1901, '[]', NULL),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (4, 0, 1, -1, 1, -1, 1, -1, 1, -9007199254740993, 9223372036854775808, 1, 2.5e-308, 0, 0, 1, 1, 0.5, 1,
   'x', 'a', x'809f8e9a41', 'c', x'', x'ff', 'z', 'z', 'z', 'z', x'', x'', '1999-12-31', '1999-12-31 23:59:59',
   '1999-12-31 23:59:59.5', '1999-12-31 23:59:59.123456', '1999-12-31 23:59:59.9', '2024-03-31 02:30:00',
   '2024-03-31 02:30:00.1', '1970-01-01 00:00:01.000001', '-00:00:01', 'b', 'y', b'1111111111', 0, '"text"',
   'ffffffff-ffff-ffff-ffff-ffffffffffff')`;

/** Every row image of `table` in the log up to where it stands now, as zongji's row events hold them. */
async function readLog(table = 't', reading?: RowReading): Promise<unknown[]> {
  const [status] = (await server.query('SHOW MASTER STATUS')) as { File: string; Position: number }[];
  const end = status as { File: string; Position: number };
  const { default: ZongJi } = (await import('@vlasky/zongji')) as unknown as {
    default: new (options: object) => {
      options: { filename?: string; position?: number };
      on(event: string, listener: (event: never) => void): void;
      start(options: object): void;
      stop(): void;
    };
  };
  const reader = new ZongJi({
    host: server.host,
    port: server.port,
    user: 'root',
    password: '',
    charset: 'utf8mb4',
    timezone: 'Z',
    dateStrings: true,
    jsonStrings: true,
  });
  if (reading) readWith(reader, reading);
  const images: unknown[] = [];
  // Stopped however the read ends: a read that fails would leave its connections open into the next test.
  const read = new Promise<void>((resolve, reject) => {
    reader.on('error', reject);
    reader.on('binlog', (event: { getTypeName(): string; rows?: unknown[] }) => {
      const type = event.getTypeName();
      if (type === 'WriteRows' || type === 'UpdateRows' || type === 'DeleteRows')
        images.push(...(event.rows ?? []).map((row) => ({ type, row })));
      const at = reader.options;
      if (at.filename === end.File && (at.position ?? 0) >= end.Position) resolve();
    });
    reader.start({
      serverId: randomInt(0x40000000, 0x7fffffff),
      filename: 'binlog.000001',
      position: 4,
      includeSchema: { shop: [table] },
      excludeEvents: ['annotaterows'],
    });
  });
  try {
    await read;
  } finally {
    reader.stop();
  }
  return images;
}

beforeAll(async () => {
  server = await startPrivateMariadb();
  await server.query('CREATE DATABASE shop CHARACTER SET utf8mb4');
  await server.query(
    `${TABLE}; INSERT INTO t VALUES ${ROWS};
     UPDATE t SET vc = 'changed', d1 = d1 + 1, t6 = '2001-01-01 01:01:01.5', s3 = NULL, ti = ti - 1 WHERE id IN (2, 4);
     UPDATE t SET id = 5 WHERE id = 3;
     DELETE FROM t WHERE id = 1;
     CREATE TABLE z (id int PRIMARY KEY, v mediumtext COMPRESSED); INSERT INTO z VALUES (1, REPEAT('a', 2000000));
     CREATE TABLE k (a varchar(10), b datetime(3), v text, n decimal(9,2), PRIMARY KEY (a, b)) CHARACTER SET latin1;
     INSERT INTO k VALUES ('x', '2024-01-01 00:00:00.5', 'one', 1.5), ('y', '2024-01-02 00:00:00', NULL, NULL);
     UPDATE k SET v = 'two', n = 2 WHERE a = 'x';
     UPDATE k SET b = '2024-01-03 00:00:00' WHERE a = 'y';`,
    'shop',
  );
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

describe("lake's reader of binary log row images", () => {
  it('reads every row image exactly as zongji does', async () => {
    const byZongji = await readLog();
    // 4 inserts, 3 updated rows (before and after) and a delete.
    expect(byZongji).toHaveLength(8);
    expect(await useLakeRowImages()).toBe(true);
    const before = rowImagesRead();
    const byLake = await readLog();
    // Each update's row is two images.
    expect(rowImagesRead() - before).toBe(11);
    expect(byLake).toEqual(byZongji);
    // Spot checks of what both give, so the comparison is not of two empty reads.
    const first = (byLake[0] as { row: Record<string, unknown> }).row;
    expect(first).toMatchObject({
      bi: '-9223372036854775808',
      bu: '18446744073709551615',
      d1: '-12345678901234567890123456789012345.123456789012345678901234567890',
      vc: '😀 Åke ß',
      vl: 'café',
      t6: '9999-12-31 23:59:59.999999',
      s0: '1970-01-01 00:00:01',
      dt: '0000-00-00',
    });
    expect((byLake[3] as { row: Record<string, unknown> }).row.vl).toBe('€ŸŽšA');
  });

  it("reads an update's row before it for its key alone, and whole when the key changed", async () => {
    expect(await useLakeRowImages()).toBe(true);
    const reading = (keys: [string, string[]][]): RowReading => ({
      charsets: new Map(),
      maxValueBytes: 1 << 30,
      keys: new Map(keys),
    });
    type Image = { type: string; row: Record<string, unknown> | { before: Record<string, unknown>; after: unknown } };
    // What the sync needs of a row before an update that kept its key is the key: zongji's image cut to it.
    const keyOnly = (images: unknown[], key: string[], moved: (before: Record<string, unknown>) => boolean) =>
      (images as Image[]).map((image) => {
        if (image.type !== 'UpdateRows') return image;
        const { before, after } = image.row as { before: Record<string, unknown>; after: unknown };
        return moved(before)
          ? image
          : { ...image, row: { before: Object.fromEntries(key.map((k) => [k, before[k]])), after } };
      });
    const byZongji = await readLog();
    const start = rowImagesRead();
    const byLake = await readLog('t', reading([['shop.t', ['id']]]));
    // Every column family is passed over in the rows before (the rows after must still come out right), and the
    // row whose key moved (3 to 5) is read again whole: 4 inserts, 2 × 2 + 3 for the updates, a delete.
    expect(rowImagesRead() - start).toBe(12);
    expect(byLake).toEqual(keyOnly(byZongji, ['id'], (before) => before.id === 3));
    expect((byLake[4] as Image).row).toMatchObject({ before: { id: 2 } });
    expect(Object.keys((byLake[4] as { row: { before: object } }).row.before)).toEqual(['id']);

    // A key of two columns, text and a datetime with a fraction.
    const kByZongji = await readLog('k');
    const kByLake = await readLog('k', reading([['shop.k', ['a', 'b']]]));
    expect(kByLake).toEqual(keyOnly(kByZongji, ['a', 'b'], (before) => before.a === 'y'));
    expect((kByLake[2] as Image).row).toMatchObject({ before: { a: 'x', b: '2024-01-01 00:00:00.500' } });
    // A table whose key the reader is not told (or names a column the log lacks) is read whole.
    expect(await readLog('k', reading([['shop.k', ['a', 'missing']]]))).toEqual(kByZongji);
  });

  it('refuses a row image that does not fit its event, where zongji would read the event forever', async () => {
    expect(await useLakeRowImages()).toBe(true);
    const lib = join(dirname(createRequire(import.meta.url).resolve('@vlasky/zongji')), 'lib');
    const { WriteRows } = (await import(pathToFileURL(join(lib, 'rows_event.js')).href)) as {
      WriteRows: { prototype: object };
    };
    /** A row event of one column as a server that lies could send it: its bitmap of columns present, then `bytes`. */
    const image = (column: object, columnType: string, present: number, bytes: number[]): unknown => {
      const event = Object.assign(Object.create(WriteRows.prototype) as Record<string, unknown>, {
        tableId: 7,
        tableMap: { 7: { columns: [{ name: 'c', ...column }], columnSchemas: [{ COLUMN_TYPE: columnType }] } },
        columns_present_bitmap: Buffer.from([present]),
        _zongji: { connection: { config: { dateStrings: true, timezone: 'Z' } } },
      }) as unknown as { _fetchOneRow(parser: { _buffer: Buffer; _offset: number }): unknown };
      return event._fetchOneRow({ _buffer: Buffer.from(bytes), _offset: 0 });
    };
    const varchar = { charset: 'utf8mb4', type: 15, metadata: { max_length: 40 } };
    expect(image(varchar, 'varchar(10)', 1, [0, 2, 0x41, 0x42])).toEqual({ c: 'AB' });
    // No column present: an image of no bytes, which would never move the reading on.
    expect(() => image(varchar, 'varchar(10)', 0, [0, 2, 0x41, 0x42])).toThrow('does not fit its event');
    // A length past the event's end.
    expect(() => image(varchar, 'varchar(10)', 1, [0, 200, 0x41])).toThrow('does not fit its event');
    // A DECIMAL whose metadata MySQL never writes (more digits after the point than in all) is left to zongji,
    // which refuses it.
    expect(() =>
      image({ charset: null, type: 246, metadata: { precision: 10, decimals: 20 } }, 'decimal(10,20)', 1, [0, 1, 2]),
    ).toThrow();
  });

  it("says what to set when the source logs changes in a form the reader cannot decode, in lake's words", async () => {
    const lib = join(dirname(createRequire(import.meta.url).resolve('@vlasky/zongji')), 'lib');
    const events = (await import(pathToFileURL(join(lib, 'binlog_event.js')).href)) as Record<
      string,
      { unsupportedReason: string }
    >;
    // zongji's own words at the first such event (it emits them as an error): named for it, not for what to do here.
    const compressed = unreadableEvents(new Error(events.TransactionPayload?.unsupportedReason));
    expect(compressed?.message).toBe(
      "the source's binary log compresses its transactions (binlog_transaction_compression=ON), which lake cannot read: SET GLOBAL binlog_transaction_compression = OFF (and in the server's configuration), then run lake sync start --full-refresh to read the tables whole",
    );
    expect(unreadableEvents(new Error(events.PartialUpdateRows?.unsupportedReason))?.message).toMatch(
      /partial JSON updates .*SET GLOBAL binlog_row_value_options = ''/,
    );
    expect(unreadableEvents(new Error('connect ECONNREFUSED'))).toBeUndefined();
  });

  it('inflates a compressed value no further than the longest record a sync takes', async () => {
    expect(await useLakeRowImages()).toBe(true);
    const whole = (await readLog('z', { charsets: new Map(), maxValueBytes: 4_000_000 })) as { row: { v: string } }[];
    expect(whole[0]?.row.v).toHaveLength(2_000_000);
    // A few kilobytes of the log that would inflate to 2 MB: the read ends, saying why.
    await expect(readLog('z', { charsets: new Map(), maxValueBytes: 1_000_000 })).rejects.toThrow(
      'a compressed value of a changed row inflates past 1000000 bytes, the longest a sync takes (LAKE_SYNC_MAX_RECORD_BYTES)',
    );
  });
});
