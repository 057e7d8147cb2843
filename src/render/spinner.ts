import type { IOStreams } from './iostreams.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface Spinner {
  update(label: string): void;
  stop(): void;
}

const silent: Spinner = { update() {}, stop() {} };

/**
 * A one-line spinner with elapsed time on stderr; a no-op unless stderr is a terminal, so pipes and cron stay clean.
 * With `delayMs`, nothing is drawn until that much time has passed: a quick query leaves no trace.
 */
export function startSpinner(
  io: IOStreams,
  label: string,
  now: () => number = Date.now,
  options: { delayMs?: number } = {},
): Spinner {
  if (!io.progressEnabled) return silent;
  const started = now();
  let text = label;
  let frame = 0;
  let drawn = false;
  const draw = (): void => {
    if (now() - started < (options.delayMs ?? 0)) return;
    drawn = true;
    const seconds = ((now() - started) / 1000).toFixed(1);
    io.stderr.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${text} ${seconds}s`);
  };
  const timer = setInterval(draw, 100);
  timer.unref();
  draw();
  return {
    update(next) {
      text = next;
    },
    stop() {
      clearInterval(timer);
      if (drawn) io.stderr.write('\r\x1b[2K');
    },
  };
}
