/**
 * Runs task every `ms`, one run at a time, until the timer is cleared. A run that fails (the metadata store
 * unreachable for a moment, a file in use) changes nothing and the next tick tries again; it must never become an
 * unhandled rejection, which would end the process.
 */
export function repeat(ms: number, task: () => Promise<unknown>): NodeJS.Timeout {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    task()
      .catch(() => undefined)
      .finally(() => (running = false));
  }, ms);
  timer.unref();
  return timer;
}

/** Starts work nobody waits for; its failure is the next attempt's business, as with repeat. */
export function inBackground(task: () => Promise<unknown>): void {
  task().catch(() => undefined);
}
