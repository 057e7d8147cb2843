import { deflateSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { boundEventInflation } from '../../src/service/syncs/cdc/binlog-inflation.js';
import { zongjiDriver } from '../../src/support/source-drivers.js';

/**
 * What a MariaDB compressed event (log_bin_compress) inflates to, held to the record cap while zongji inflates it:
 * zongji's own unwrapping of an event's payload (its common module, as its event classes call it) run inside a
 * bounded connection's packet handling, on a zlib bomb of 64 MiB of zeros in 64 KB.
 */
const zlib = createRequire(import.meta.url)('node:zlib') as { inflateSync: unknown };

/** zongji's envelope of a compressed event's payload: the header (zlib, 4 bytes of length) and the original length. */
function compressedPayload(original: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(original.length);
  return Buffer.concat([Buffer.from([0x84]), length, deflateSync(original)]);
}

/** A connection as mysql2's: each packet handed to `handlePacket`, which here unwraps it as zongji's events do. */
async function connectionInflating(): Promise<{ handlePacket(packet: Buffer): Buffer }> {
  const { common } = await zongjiDriver();
  const unwrap = common.uncompressBinlogEventPayload as (payload: Buffer) => Buffer;
  return { handlePacket: (packet) => unwrap(packet) };
}

describe('a compressed binary log event', () => {
  const bomb = compressedPayload(Buffer.alloc(64 << 20));

  it('inflates whole through zongji when nothing bounds it (why the bound is needed)', async () => {
    expect(bomb.length).toBeLessThan(100_000);
    const connection = await connectionInflating();
    expect(connection.handlePacket(bomb).length).toBe(64 << 20);
  });

  it('stops inflating at the record cap and its framing, with what was passed, on a bounded connection', async () => {
    const connection = await connectionInflating();
    const unbounded = zlib.inflateSync;
    boundEventInflation(connection, 1 << 20);
    const before = process.memoryUsage().arrayBuffers;
    let thrown: unknown;
    try {
      connection.handlePacket(bomb);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({
      code: 'wire_message_too_large',
      message:
        "a compressed event of the source's binary log (log_bin_compress) inflates past 1 MiB, the longest a sync takes (LAKE_SYNC_MAX_RECORD_BYTES)",
    });
    // zlib stopped at the bound: nothing near the bomb's 64 MiB was held.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 << 20);
    // An event within the bound inflates as before, and the bound is gone once the packet is handled.
    const small = Buffer.from('INSERT INTO items VALUES (1)');
    expect(connection.handlePacket(compressedPayload(small))).toEqual(small);
    expect(zlib.inflateSync).toBe(unbounded);
  });

  it('leaves an inflation that names its own bound as it asked, inside the packet too', async () => {
    // As zongji reads it: the module's property at the call, which the bound replaces while a packet is handled.
    const inflate = (packet: Buffer, options: object): Buffer =>
      (zlib.inflateSync as typeof import('node:zlib').inflateSync)(packet, options);
    const inside = { handlePacket: (packet: Buffer) => inflate(packet, { maxOutputLength: 8 << 20 }) };
    boundEventInflation(inside, 1 << 20);
    expect(inside.handlePacket(deflateSync(Buffer.alloc(4 << 20))).length).toBe(4 << 20);
  });

  it('refuses a connection it cannot bound (a mysql2 without the packet handler)', () => {
    expect(() => boundEventInflation({}, 1 << 20)).toThrow(/no packet handler/);
  });
});
