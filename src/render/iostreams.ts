import type { Readable, Writable } from 'node:stream';

export interface OutputStream extends Pick<Writable, 'write'> {
  isTTY?: boolean;
  columns?: number;
}

/** Work to settle before the process ends because its reader went away (a local sync to record as cancelled). */
const brokenPipeHooks = new Set<() => Promise<void>>();
/** How long those may take: the reader is gone, nobody waits for more than a moment. */
const BROKEN_PIPE_GRACE_MS = 5000;
let ending = false;

/** Registers work to settle when stdout's reader goes away; returns the way to remove it. */
export function onBrokenPipe(hook: () => Promise<void>): () => void {
  brokenPipeHooks.add(hook);
  return () => brokenPipeHooks.delete(hook);
}

function endOnBrokenPipe(): void {
  if (ending) return;
  ending = true;
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, BROKEN_PIPE_GRACE_MS)));
  // A hook that fails changes nothing here: the process ends either way, and the job's lease covers the rest.
  const settled = Promise.allSettled([...brokenPipeHooks].map((hook) => hook()));
  void Promise.race([settled, grace]).finally(() => {
    clearTimeout(timer);
    process.exit(0);
  });
}

/**
 * The one place that decides what the terminal can take: whether each stream is a terminal and whether colour is
 * on (NO_COLOR turns it off, FORCE_COLOR on, otherwise only on a terminal). Commands never look at process.std*.
 */
export class IOStreams {
  constructor(
    readonly stdout: OutputStream,
    readonly stderr: OutputStream,
    readonly stdin: Readable,
    private readonly env: Record<string, string | undefined>,
    private colorDisabledByFlag = false,
  ) {}

  static system(): IOStreams {
    // A reader that stops early (`lake … | head`) closes the pipe; that ends the command quietly, as it would
    // end cat or grep, instead of surfacing EPIPE as a crash.
    for (const stream of [process.stdout, process.stderr]) {
      stream.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'EPIPE') return endOnBrokenPipe();
        throw error;
      });
    }
    return new IOStreams(process.stdout, process.stderr, process.stdin, process.env);
  }

  get isStdoutTTY(): boolean {
    return this.stdout.isTTY === true;
  }

  get isStderrTTY(): boolean {
    return this.stderr.isTTY === true;
  }

  disableColor(): void {
    this.colorDisabledByFlag = true;
  }

  colorEnabled(stream: 'stdout' | 'stderr'): boolean {
    if (this.colorDisabledByFlag) return false;
    if (this.env.NO_COLOR !== undefined && this.env.NO_COLOR !== '') return false;
    const force = this.env.FORCE_COLOR;
    if (force !== undefined && force !== '' && force !== '0' && force !== 'false') return true;
    return stream === 'stdout' ? this.isStdoutTTY : this.isStderrTTY;
  }

  /** Live progress is drawn only where a person watches: stderr on a terminal. */
  get progressEnabled(): boolean {
    return this.isStderrTTY && this.env.CI === undefined;
  }

  /**
   * Whether stdout is a terminal with a size to draw in. Some (`script`, some CI runners) report 0×0: a live view
   * there clears the whole screen on every frame, so it gets plain lines instead.
   */
  get terminalHasSize(): boolean {
    const { columns, rows } = this.stdout as { columns?: number; rows?: number };
    return this.isStdoutTTY && (columns === undefined || columns > 0) && (rows === undefined || rows > 0);
  }

  get terminalWidth(): number {
    return this.stdout.columns ?? 100;
  }
}
