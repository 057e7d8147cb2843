import { PassThrough, type Readable } from 'node:stream';
import type pg from 'pg';
import type { to as CopyTo } from 'pg-copy-streams';
import { endTenantConnection, requestCancel, runningStatement } from '../connectors/tenant-connections.js';
import { DISCARD_BYTES, DISCARD_MS, IGNORED_STOP } from './abandoned-reads.js';

/**
 * Starts `COPY … TO STDOUT` on a source connection and gives its rows as `copy`; a cancel of the sync ends it.
 * `stop` forgets the cancel once the copy has ended.
 *
 * A reader that gives up part-way (a staging cap, a failed write, a full disk) destroys `copy`, while the server is
 * still sending. The connection answers nothing else until that COPY ends, and PostgreSQL does not act on a cancel
 * while it is blocked writing to a client that reads nothing (it takes interrupts then only to terminate), so the
 * statement is cancelled and what is still on its way is read and thrown away until the server stops: the table's
 * savepoint can then be rolled back and the connection read the next table. A server that keeps sending past the
 * bounds (abandoned-reads.ts) has its connection ended, which fails the sync with that reason rather than leave it waiting.
 */
export function startSourceCopy(
  to: typeof CopyTo,
  on: pg.Client,
  sql: string,
  signal: AbortSignal,
): { copy: Readable; stop: () => void } {
  const query = on.query(to(sql));
  const copy = new PassThrough();
  let settled = false;
  query.once('end', () => (settled = true));
  query.on('error', (error: Error) => {
    settled = true;
    // After a give-up the error is the cancel's own: the reader already has its reason.
    if (!copy.destroyed) copy.destroy(error);
  });
  query.pipe(copy);
  const abort = (): void => void copy.destroy(new Error('cancelled'));
  if (signal.aborted) abort();
  signal.addEventListener('abort', abort, { once: true });
  copy.once('close', () => {
    if (settled || query.readableEnded) return;
    query.unpipe(copy);
    let discarded = 0;
    let gaveUp = false;
    const ignored = (): void => {
      clearTimeout(timer);
      if (gaveUp) return;
      gaveUp = true;
      endTenantConnection(on, new Error(IGNORED_STOP));
    };
    const timer = setTimeout(ignored, DISCARD_MS);
    timer.unref();
    query.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > DISCARD_BYTES) ignored();
    });
    // Unpiped, the stream stays paused until told to flow: a 'data' listener alone does not restart it.
    query.resume();
    query.once('close', () => clearTimeout(timer));
    query.once('end', () => clearTimeout(timer));
    query.once('error', () => clearTimeout(timer));
    if (runningStatement(on) === query) requestCancel(on);
  });
  return { copy, stop: () => signal.removeEventListener('abort', abort) };
}
