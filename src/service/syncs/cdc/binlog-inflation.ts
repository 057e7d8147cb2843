import type * as zlib from 'node:zlib';
import { formatBytes } from '../../../support/format-bytes.js';
import { requireCommonJs } from '../../../support/load-commonjs.js';
import { WIRE_FRAMING_BYTES, WireLimitExceeded } from '../../connectors/wire-limits.js';

/**
 * Node's zlib module object: the one zongji's common module calls `inflateSync` on, as a property read at each call,
 * whether zongji is loaded from its package (an ES module's default import of a builtin) or from lake's bundle.
 */
const zlibModule = requireCommonJs('node:zlib') as { inflateSync: typeof zlib.inflateSync };
const unboundedInflateSync = zlibModule.inflateSync;

/** The part of mysql2's connection that takes each packet the server sent, synchronously. */
interface PacketHandler {
  handlePacket(...packet: unknown[]): unknown;
}

/**
 * Bounds what a MariaDB compressed event inflates to while the binary log's connection handles it. With
 * log_bin_compress=ON, a statement's text and a rows event's row images arrive as a zlib stream, and zongji inflates
 * it with `inflateSync` and no bound, inside the synchronous handling of the event's packet: the wire bound holds the
 * event to the longest record a sync takes, but a few kilobytes of a hostile server's log could inflate to gigabytes
 * of lake serve's memory before any later check sees a row. The inflated bytes are what an uncompressed event would
 * have carried, so they get the wire's bound for it (the record cap and its framing), applied by zlib as it inflates;
 * past it, the read fails saying so. Only an `inflateSync` that names no bound of its own is bounded, and only while
 * a packet of this connection is being handled: the call that inflates runs inside it, and nothing else can run in
 * between.
 */
export function boundEventInflation(connection: object, maxRecordBytes: number): void {
  const maxBytes = maxRecordBytes + WIRE_FRAMING_BYTES;
  const handler = connection as Partial<PacketHandler>;
  const handlePacket = handler.handlePacket;
  // A mysql2 that renamed it would leave every compressed event unbounded: the read is refused instead.
  if (typeof handlePacket !== 'function')
    throw new Error("the binary log's connection has no packet handler to bound compressed events with (mysql2)");
  const bounded = (buffer: zlib.InputType, options?: zlib.ZlibOptions): Buffer => {
    if (options?.maxOutputLength !== undefined) return unboundedInflateSync(buffer, options);
    try {
      return unboundedInflateSync(buffer, { ...options, maxOutputLength: maxBytes });
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw compressedEventTooLarge(maxRecordBytes);
      throw error;
    }
  };
  handler.handlePacket = function (this: unknown, ...packet: unknown[]): unknown {
    const outer = zlibModule.inflateSync;
    zlibModule.inflateSync = bounded as typeof zlib.inflateSync;
    try {
      return handlePacket.apply(this, packet);
    } finally {
      zlibModule.inflateSync = outer;
    }
  };
}

/** Why a read stopped at a compressed event that inflated past the longest record a sync takes. */
function compressedEventTooLarge(maxRecordBytes: number): WireLimitExceeded {
  return new WireLimitExceeded(
    `a compressed event of the source's binary log (log_bin_compress) inflates past ${formatBytes(maxRecordBytes)}, the longest a sync takes (LAKE_SYNC_MAX_RECORD_BYTES)`,
  );
}
