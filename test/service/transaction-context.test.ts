import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { TransactionContext } from '../../src/service/store/transaction-context.js';

/** The fastest of three runs of 100,000 awaited promises, in milliseconds. */
async function promiseCost(): Promise<number> {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    for (let i = 0; i < 100_000; i++) await Promise.resolve(i);
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

describe('transaction context', () => {
  it('is seen by the work a transaction starts, and by nothing outside or after it', async () => {
    const context = new TransactionContext<{ name: string }>();
    const seen: (string | undefined)[] = [];
    let late: Promise<void> | undefined;
    let release!: () => void;
    const outside = new Promise<void>((resolve) => (release = resolve)).then(() => {
      seen.push(`outside: ${context.current()?.name}`);
    });
    await context.run({ name: 'a' }, async () => {
      await Promise.resolve();
      seen.push(`inside: ${context.current()?.name}`);
      await context.run({ name: 'b' }, async () => void seen.push(`nested: ${context.current()?.name}`));
      release();
      await outside;
      // Started inside, still running after the transaction ended: an immediate runs after the microtasks that
      // end run(), so this continuation comes after it, whatever the machine's speed.
      late = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        seen.push(`late: ${context.current()?.name}`);
      });
    });
    await late;
    expect(seen).toEqual(['inside: a', 'nested: b', 'outside: undefined', 'late: undefined']);
    expect(context.current()).toBeUndefined();
  });

  it('leaves no per-promise hook running once the last transaction ends', async () => {
    // What every promise costs while Node 20's async context is on: about three times its cost without.
    const hooked = new AsyncLocalStorage<object>();
    const withHooks = await hooked.run({}, promiseCost);
    hooked.disable();
    const context = new TransactionContext<object>();
    await context.run({}, async () => undefined);
    expect((await promiseCost()) * 1.8).toBeLessThan(withHooks);
  });
});
