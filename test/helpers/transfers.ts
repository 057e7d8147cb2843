/**
 * A writer that moves one unit of an amount from one row to another of a table of `rows` rows (ids 1 to rows), each
 * move a transaction of its own, again and again until stopped. The table's sum never changes, so a read of the
 * whole table from one point in time adds up, and a read that mixes two points in time may not.
 */
export function startTransfers(
  rows: number,
  transfer: (from: number, to: number) => Promise<void>,
): { stop(): Promise<number> } {
  let writing = true;
  let moved = 0;
  const writes = (async () => {
    for (let i = 0; writing; i++) {
      await transfer(1 + ((i * 7919) % rows), 1 + ((i * 104_729) % rows));
      moved++;
    }
  })();
  return {
    /** Stops after the move under way and answers how many moves were made. */
    async stop() {
      writing = false;
      await writes;
      return moved;
    },
  };
}
