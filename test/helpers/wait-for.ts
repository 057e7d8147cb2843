/**
 * Waits for a condition, not for time: calls `probe` until `done` accepts its value (every `intervalMs`), and
 * returns that value; after `timeoutMs` (the third argument, or its field) it returns the last value, for the test's own assertion to explain.
 * Tests use it wherever work must have started (a COPY begun, a query running, a prompt shown) before a signal, a
 * cancel or an assertion, instead of a fixed sleep that hopes it has.
 */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  done: (value: T) => boolean,
  limits: number | { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 25 } = typeof limits === 'number' ? { timeoutMs: limits } : limits;
  const started = Date.now();
  let value = await probe();
  while (!done(value) && Date.now() - started < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    value = await probe();
  }
  return value;
}
