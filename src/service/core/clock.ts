/**
 * Time as the services see it. Real by default; tests pass a faster one so that timings measured in tens of
 * seconds (stream heartbeats, the two-minute stream limit, leases) run in milliseconds.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after ms (as this clock counts), or at once when the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function sleepReal(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export const REAL_CLOCK: Clock = { now: () => Date.now(), sleep: sleepReal };

/** A clock that runs `factor` times faster than real time, from the moment it is made. */
export function fastClock(factor: number): Clock {
  const origin = Date.now();
  return {
    now: () => origin + (Date.now() - origin) * factor,
    sleep: (ms, signal) => sleepReal(ms / factor, signal),
  };
}
