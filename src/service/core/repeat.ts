/** Told of a background failure, for the server's log; the work itself goes on. */
export type BackgroundFailure = (error: unknown) => void;

/**
 * Runs task every `ms`, one run at a time, until the timer is cleared. A run that fails (the metadata store
 * unreachable for a moment, a file in use) changes nothing and the next tick tries again; it must never become an
 * unhandled rejection, which would end the process. `failed` hears of each failure (lake serve logs it).
 */
export function repeat(
  ms: number,
  task: () => Promise<unknown>,
  failed: BackgroundFailure = () => undefined,
): NodeJS.Timeout {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    task()
      .catch(failed)
      .finally(() => (running = false));
  }, ms);
  timer.unref();
  return timer;
}

/** Starts work nobody waits for; its failure is the next attempt's business, as with repeat, and `failed`'s. */
export function inBackground(task: () => Promise<unknown>, failed: BackgroundFailure = () => undefined): void {
  task().catch(failed);
}
