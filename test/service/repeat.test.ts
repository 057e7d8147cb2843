import { describe, expect, it } from 'vitest';
import { inBackground, repeat } from '../../src/service/core/repeat.js';
import { waitFor } from '../helpers/wait-for.js';

describe('background work', () => {
  it('a failing run is reported, never thrown, and the next run goes on', async () => {
    const failures: unknown[] = [];
    let runs = 0;
    const timer = repeat(
      5,
      async () => {
        runs++;
        if (runs === 1) throw new Error('store unreachable for a moment');
      },
      (error) => failures.push(error),
    );
    try {
      expect(
        await waitFor(
          () => runs,
          (n) => n >= 3,
          2_000,
        ),
      ).toBeGreaterThanOrEqual(3);
      expect(failures).toEqual([new Error('store unreachable for a moment')]);
    } finally {
      clearInterval(timer);
    }
    const once: unknown[] = [];
    inBackground(
      () => Promise.reject(new Error('collection failed')),
      (error) => once.push(error),
    );
    expect(
      await waitFor(
        () => once.length,
        (n) => n === 1,
        1_000,
      ),
    ).toBe(1);
  });
});
