import type { Duplex } from 'node:stream';
import { formatBytes } from '../../support/format-bytes.js';

/**
 * Bounds on what a source's (or a destination's) server may send before its driver has it. node-postgres and mysql2
 * both collect a protocol message whole before they hand it on, at whatever length the server announces: up to 2 GiB
 * for a PostgreSQL message, and without end for a MySQL packet continued in 16 MiB parts. A hostile server (a tenant's
 * own) could so fill lake's memory with one row, long before any record cap lake applies to the rows it is given.
 * These watch the bytes as they arrive, read the framing alone, and end the connection at the first message announced
 * longer than the bound, before the driver has buffered it.
 */

/** The protocol framing of a connection's messages. */
export type WireProtocol = 'postgres' | 'mysql';

/** What a bounded connection fails with: the caller's own words for the bound (its setting named). */
export class WireLimitExceeded extends Error {
  readonly code = 'wire_message_too_large';
}

/** What a protocol message may carry beyond the row itself: its header, field lengths, a binary log event's frame. */
export const WIRE_FRAMING_BYTES = 1 << 20;

/** The most a source's server may send to a discovery or a connection test in all (a hostile catalog's endless rows). */
export const MAX_DISCOVERY_BYTES = 64 << 20;

/** Why a sync stopped at a row longer than it takes, whether the row was sent whole or announced on the wire. */
export function recordTooLarge(maxRecordBytes: number): string {
  return `a row of the source is larger than ${formatBytes(maxRecordBytes)}, the longest a sync takes (LAKE_SYNC_MAX_RECORD_BYTES)`;
}

/**
 * The rows one PostgreSQL statement may answer with in all, in the longest messages a connection takes: node-postgres
 * keeps a statement's rows until it ends, so a server that answered a few-row catalog or plan statement with rows
 * without end would fill memory. A few of the longest rows is far above what lake's statements read from a real
 * server (64 MiB rows: 260 MiB); a COPY's rows are streamed and do not count, and neither does the change stream of the
 * session that reads it as it arrives (ConnectorSettings.maxResultBytes).
 */
const RESULT_MESSAGES = 4;

/**
 * The longest message a connection takes, a statement's rows in all, what a catalog-only connection (a connection
 * test, a discovery) receives in all, and what each fails with past it.
 */
export interface MessageBound {
  maxBytes: number;
  maxResultBytes: number;
  maxTotalBytes: number;
  tooLarge: () => WireLimitExceeded;
  resultTooLarge: () => WireLimitExceeded;
  totalTooLarge: () => WireLimitExceeded;
}

/**
 * A connection's bound: a sync's record cap (LAKE_SYNC_MAX_RECORD_BYTES) and framing; others, a discovery's bytes.
 * A catalog-only connection asks a real server for a bounded catalog, whatever a hostile one sends: it is also
 * bounded in all (MAX_DISCOVERY_BYTES), counted where the driver reads (the TLS socket, once swapped in).
 */
export function messageBound(
  settings: { maxRecordBytes?: number; maxResultBytes?: number },
  options: { catalogOnly?: boolean } = {},
): MessageBound {
  const record = settings.maxRecordBytes ?? MAX_DISCOVERY_BYTES;
  const result = settings.maxResultBytes ?? RESULT_MESSAGES * (record + WIRE_FRAMING_BYTES);
  return {
    maxBytes: record + WIRE_FRAMING_BYTES,
    maxResultBytes: result,
    maxTotalBytes: options.catalogOnly ? MAX_DISCOVERY_BYTES : Number.POSITIVE_INFINITY,
    tooLarge: () => new WireLimitExceeded(recordTooLarge(record)),
    resultTooLarge: () =>
      new WireLimitExceeded(
        `the source answered one statement with more than ${formatBytes(result)} of rows, more than lake reads at a time`,
      ),
    totalTooLarge: () => new WireLimitExceeded('the source sent more than a discovery reads'),
  };
}

/** What the framing check found: all fits, a message too long, or (PostgreSQL) a statement's rows too many. */
export type FramingVerdict = 'fits' | 'message' | 'result';

/** A MySQL packet of this length is continued in the next one (the protocol's 16 MiB parts). */
const MYSQL_CONTINUED = 0xffffff;

/**
 * Reads the framing of `protocol` from consecutive chunks of what a server sends (the first at a message boundary):
 * 'fits' while every message announced fits `maxBytes` and, on PostgreSQL, the rows (DataRow messages) since the last
 * ReadyForQuery fit `maxResultBytes`; from the first header past either, what it passed, for good.
 */
export function framingCheck(
  protocol: WireProtocol,
  maxBytes: number,
  maxResultBytes = Number.POSITIVE_INFINITY,
): (chunk: Buffer) => FramingVerdict {
  const headerLength = protocol === 'postgres' ? 5 : 4;
  const header = Buffer.alloc(headerLength);
  let headerFill = 0;
  let payloadLeft = 0;
  // A MySQL message continued over several packets counts as one.
  let messageBytes = 0;
  let continued = false;
  let resultBytes = 0;
  let verdict: FramingVerdict = 'fits';
  return (chunk) => {
    let at = 0;
    while (at < chunk.length && verdict === 'fits') {
      if (payloadLeft > 0) {
        const skipped = Math.min(payloadLeft, chunk.length - at);
        at += skipped;
        payloadLeft -= skipped;
        continue;
      }
      // A header whole in the chunk is read where it is (the common case, and most of the cost: one per row); one
      // cut between chunks is gathered first.
      let from: Buffer;
      let base: number;
      if (headerFill === 0 && at + headerLength <= chunk.length) {
        from = chunk;
        base = at;
        at += headerLength;
      } else {
        const copied = chunk.copy(header, headerFill, at, at + headerLength - headerFill);
        headerFill += copied;
        at += copied;
        if (headerFill < headerLength) break;
        headerFill = 0;
        from = header;
        base = 0;
      }
      if (protocol === 'postgres') {
        // The length counts itself; a garbled one is the driver's to refuse.
        payloadLeft = Math.max(0, from.readInt32BE(base + 1) - 4);
        messageBytes = headerLength + payloadLeft;
        const type = from[base];
        if (type === 0x44 /* D: DataRow */) resultBytes += messageBytes;
        else if (type === 0x5a /* Z: ReadyForQuery */) resultBytes = 0;
      } else {
        payloadLeft = (from[base] as number) | ((from[base + 1] as number) << 8) | ((from[base + 2] as number) << 16);
        messageBytes = (continued ? messageBytes : 0) + headerLength + payloadLeft;
        continued = payloadLeft === MYSQL_CONTINUED;
      }
      if (messageBytes > maxBytes) verdict = 'message';
      else if (resultBytes > maxResultBytes) verdict = 'result';
    }
    return verdict;
  };
}

/** Watches what `stream` receives beside its driver, and ends it at the first message longer than the bound. */
export function limitMessages(stream: Duplex, protocol: WireProtocol, bound: MessageBound): (chunk: Buffer) => void {
  const check = framingCheck(protocol, bound.maxBytes);
  let received = 0;
  const watch = (chunk: Buffer): void => {
    received += chunk.length;
    if (stream.destroyed) return;
    if (check(chunk) !== 'fits') stream.destroy(bound.tooLarge());
    else if (received > bound.maxTotalBytes) stream.destroy(bound.totalTooLarge());
  };
  stream.on('data', watch);
  return watch;
}

/**
 * The driver's own reader of `stream`, bounded: each chunk is looked at first, and one that announces a message
 * longer than the bound, or a statement's rows past theirs, ends the stream instead of reaching the driver.
 */
export function limitedReader(
  stream: Duplex,
  protocol: WireProtocol,
  bound: MessageBound,
  read: (chunk: Buffer) => void,
): (chunk: Buffer) => void {
  let check = framingCheck(protocol, bound.maxBytes, bound.maxResultBytes);
  let received = 0;
  const reader = (chunk: Buffer): void => {
    received += chunk.length;
    const verdict = check(chunk);
    if (verdict === 'fits' && received <= bound.maxTotalBytes) read(chunk);
    else if (!stream.destroyed)
      stream.destroy(
        verdict === 'message'
          ? bound.tooLarge()
          : verdict === 'result'
            ? bound.resultTooLarge()
            : bound.totalTooLarge(),
      );
  };
  // pg-copy-streams takes the reader off while a COPY reads the socket itself, and puts it back with what follows
  // the COPY's last message: the framing is read afresh from there.
  stream.on('newListener', (event: string | symbol, listener: unknown) => {
    if (event === 'data' && listener === reader) check = framingCheck(protocol, bound.maxBytes, bound.maxResultBytes);
  });
  return reader;
}
