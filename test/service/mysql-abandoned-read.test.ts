import { Readable } from 'node:stream';
import type * as mysql from 'mysql2';
import { describe, expect, it } from 'vitest';
import { IGNORED_STOP } from '../../src/service/syncs/abandoned-reads.js';
import { stopAbandonedRead } from '../../src/service/syncs/mysql-abandoned-read.js';
import type { RecordStream } from '../../src/service/syncs/mysql-records.js';

/** A statement's rows as recordStream gives them: `end()` ends it at the server; `dropped` bytes were thrown away. */
function rows(dropped: () => number): RecordStream & { end(): void } {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return Object.assign(new Readable({ read() {} }), { ended, discarded: dropped, end });
}

/** A connection as mysql2 holds it, with no thread id (so no kill is sent) and its socket open or closed. */
const connection = (destroyed = false): mysql.Connection =>
  ({ threadId: null, stream: { destroyed } }) as unknown as mysql.Connection;

const settings = { config: {}, secrets: {}, tables: [] };

describe('freeing a MySQL connection whose rows were given up', () => {
  it('waits for the statement to end, closing nothing, while the server stops within the bounds', async () => {
    const records = rows(() => 1000);
    const closed: string[] = [];
    const freed = stopAbandonedRead(records, connection(), settings, (why) => closed.push(why));
    setTimeout(() => records.end(), 120);
    await freed;
    expect(closed).toEqual([]);
  });

  it('closes the connection with that reason once the server has sent 64 MiB more after it was told to stop', async () => {
    const records = rows(() => (64 << 20) + 1);
    const closed: string[] = [];
    const started = Date.now();
    await stopAbandonedRead(records, connection(), settings, (why) => {
      closed.push(why);
      // Closed, the connection ends the statement.
      records.end();
    });
    expect(closed).toEqual([IGNORED_STOP]);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('returns at once for a connection already closed (a cancel, a bound)', async () => {
    const records = rows(() => 0);
    const closed: string[] = [];
    await stopAbandonedRead(records, connection(true), settings, (why) => closed.push(why));
    expect(closed).toEqual([]);
  });
});
