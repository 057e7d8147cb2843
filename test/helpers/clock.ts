import { REAL_CLOCK, type Clock } from '../../src/service/core/clock.js';

/** A clock that stands still until the test moves it; sleeps are real. */
export function manualClock(start = 1_800_000_000_000): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => now, sleep: REAL_CLOCK.sleep, advance: (ms) => void (now += ms) };
}
