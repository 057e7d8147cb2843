import { format } from 'node:util';

/** How many stray lines a minute reach the log; past that they are counted and the count is logged. */
const LINES_PER_MINUTE = 30;
/** How much of one stray line is kept: a library may print a whole packet. */
const MAX_CHARS = 1_000;

const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir'] as const;

/**
 * Makes what libraries print on their own (a driver's `console.error` when a server breaks its protocol, a
 * `console.trace` before it throws, a warning Node emits) one JSON line of `lake serve`'s log each, instead of raw
 * text and stack traces on its stderr: an operator's log pipeline reads one JSON object a line. A source's server
 * can make a driver print as often as it likes, so the lines are cut to 1,000 characters and at most 30 a minute
 * are logged; the rest are counted and the count is logged once the minute is over. No stack is ever logged. Gives
 * back a function that restores the console and Node's own warning printer.
 */
export function routeStrayOutput(log: (line: object) => void, now: () => number = Date.now): () => void {
  let windowStart = now();
  let logged = 0;
  let dropped = 0;
  const emit = (source: string, text: string): void => {
    const at = now();
    if (at - windowStart >= 60_000) {
      if (dropped > 0)
        log({ level: 'warn', msg: 'library output left out', count: dropped, reason: 'over 30 lines a minute' });
      windowStart = at;
      logged = 0;
      dropped = 0;
    }
    if (logged >= LINES_PER_MINUTE) {
      dropped += 1;
      return;
    }
    logged += 1;
    const line = text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}… (${text.length} characters)` : text;
    log({ level: 'warn', msg: 'library output', source, text: line });
  };

  const saved = CONSOLE_METHODS.map((name) => [name, console[name]] as const);
  for (const name of CONSOLE_METHODS)
    // console.trace's stack is the point of it and exactly what must not reach the log: its message alone goes.
    console[name] = (...args: unknown[]): void =>
      emit(`console.${name}`, name === 'trace' ? `Trace: ${format(...args)}` : format(...args));

  // Node prints warnings to stderr from a listener of its own; it is replaced while lake serve runs.
  const nodePrinters = process.listeners('warning');
  process.removeAllListeners('warning');
  const onWarning = (warning: Error): void => emit('process warning', `${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);

  return () => {
    for (const [name, method] of saved) console[name] = method as never;
    process.off('warning', onWarning);
    for (const printer of nodePrinters) process.on('warning', printer);
  };
}
