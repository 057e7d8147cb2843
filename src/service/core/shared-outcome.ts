/**
 * `check` run at most once per `ms` of real time: callers while it runs wait for that run, and callers within `ms`
 * of its end get its outcome (success or the same error) without running it again. For what unauthenticated,
 * unlimited callers trigger, such as a readiness probe's round trip to the metadata store: a flood of probes is one
 * round trip a second, not one each, on the pool every organization's requests share. Real time, not the services'
 * clock: this spaces out work, and a test's clock that stands still would keep one outcome for good.
 */
export function sharedOutcome(ms: number, check: () => Promise<void>): () => Promise<void> {
  let last: { settledAt: number; outcome: Promise<void> } | undefined;
  let running: Promise<void> | undefined;
  return () => {
    if (running) return running;
    if (last && performance.now() - last.settledAt < ms) return last.outcome;
    const run = check();
    running = run;
    const settled = (): void => {
      running = undefined;
      last = { settledAt: performance.now(), outcome: run };
    };
    // Handled here, so a failure nobody asks for again is no unhandled rejection; callers still get it.
    run.then(settled, settled);
    return run;
  };
}
