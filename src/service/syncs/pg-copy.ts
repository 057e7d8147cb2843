import type pg from 'pg';
import type { to as CopyTo } from 'pg-copy-streams';
import { requestCancel, runningStatement } from '../connectors/tenant-connections.js';

/**
 * Starts `COPY … TO STDOUT` on a source connection; a cancel of the sync destroys it. `stop` forgets the cancel
 * once the copy has ended.
 */
export function startSourceCopy(
  to: typeof CopyTo,
  on: pg.Client,
  sql: string,
  signal: AbortSignal,
): { copy: ReturnType<typeof CopyTo>; stop: () => void } {
  const copy = on.query(to(sql));
  const abort = (): void => void copy.destroy(new Error('cancelled'));
  if (signal.aborted) abort();
  signal.addEventListener('abort', abort, { once: true });
  // A COPY given up part-way (a staging cap, a failed write) is still being sent by the server, and the
  // connection answers nothing else until it ends: the server is asked to stop it, so the table's savepoint
  // can be rolled back and the connection read the next table.
  copy.on('close', () => {
    if (!copy.readableEnded && runningStatement(on) === copy) requestCancel(on);
  });
  return { copy, stop: () => signal.removeEventListener('abort', abort) };
}
