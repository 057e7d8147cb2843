import type { Duplex } from 'node:stream';
import type pg from 'pg';
import { pgDriver } from '../../support/source-drivers.js';

/**
 * Runs `text` on `client` and hands its rows on in batches as they arrive, holding a bounded number of bytes: a
 * statement's rows are otherwise kept by node-postgres until the statement ends, however many there are. A query
 * with a row listener and no callback keeps none of them; while the rows received and not yet taken pass
 * `highWaterBytes` (by `sizeOf`), the connection's socket is paused, so the server waits. What is held at once is
 * about a batch being worked on and the next one filling: twice `highWaterBytes` and a row.
 *
 * The connection is for this statement alone: if the caller stops before the last row (an error of its own), the
 * socket is destroyed, since the server would go on sending the rest.
 */
export async function* streamRowBatches<T extends pg.QueryResultRow>(
  client: pg.Client,
  text: string,
  sizeOf: (row: T) => number,
  highWaterBytes: number,
): AsyncGenerator<T[]> {
  const socket = (client as unknown as { connection: { stream: Duplex } }).connection.stream;
  let rows: T[] = [];
  let held = 0;
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  // Loaded here, not at the module's top: a command that never reaches a source does not load pg (startup.test.ts).
  const { Query } = pgDriver().pg;
  const query = new Query<T>(text);
  query.on('row', (row: T) => {
    rows.push(row);
    held += sizeOf(row);
    if (held > highWaterBytes && !socket.isPaused()) socket.pause();
    wake?.();
  });
  query.on('end', () => {
    ended = true;
    wake?.();
  });
  query.on('error', (error: Error) => {
    failure = error;
    ended = true;
    wake?.();
  });
  void client.query(query);
  try {
    for (;;) {
      if (rows.length > 0) {
        const batch = rows;
        rows = [];
        held = 0;
        if (socket.isPaused()) socket.resume();
        yield batch;
      } else if (failure) throw failure;
      else if (ended) return;
      else await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    if (!ended) socket.destroy();
    else if (socket.isPaused()) socket.resume();
  }
}
