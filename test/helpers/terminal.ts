import { spawn } from 'node:child_process';
import { hermeticHome, LAKE_BIN } from './cli.js';

export interface TerminalRun {
  code: number | null;
  /** What the terminal showed: overwritten text and control sequences removed. */
  screen: string;
  /** Every byte the program wrote to the terminal, control sequences included. */
  raw: string;
}

/** Text as a terminal leaves it: what a carriage return overwrote is gone, and control sequences are not text. */
function asShown(raw: string): string {
  return raw
    .split('\n')
    .map((line) => line.replace(/\r+$/, '').split('\r').pop() ?? '')
    .map((line) => line.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ''))
    .join('\n');
}

/**
 * The lines a terminal shows at the end, with the cursor moves and erasures a live view redraws with (up, down,
 * column, erase line, erase below) applied: text a later frame erased is gone, as it is for the person watching.
 */
export function asDrawn(raw: string): string {
  const lines: string[] = [''];
  let row = 0;
  let col = 0;
  const put = (ch: string): void => {
    const line = (lines[row] ?? '').padEnd(col, ' ');
    lines[row] = line.slice(0, col) + ch + line.slice(col + 1);
    col++;
  };
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i] as string;
    if (ch === '\x1b' && raw[i + 1] === '[') {
      const match = /^\x1b\[([0-9;?]*)([A-Za-z])/.exec(raw.slice(i));
      if (!match) continue;
      i += match[0].length - 1;
      const n = Number((match[1] ?? '').replace('?', '') || '0');
      const code = match[2];
      if (code === 'A') row = Math.max(0, row - Math.max(1, n));
      else if (code === 'B') row += Math.max(1, n);
      else if (code === 'G') col = Math.max(0, n - 1);
      else if (code === 'K') lines[row] = n === 2 ? '' : (lines[row] ?? '').slice(0, col);
      else if (code === 'J' && n === 0) (lines.splice(row + 1), (lines[row] = (lines[row] ?? '').slice(0, col)));
      while (lines.length <= row) lines.push('');
      continue;
    }
    if (ch === '\r') col = 0;
    else if (ch === '\n') {
      row++;
      col = 0;
      while (lines.length <= row) lines.push('');
    } else if (ch >= ' ' || ch === '\t') put(ch);
  }
  return lines.map((line) => line.trimEnd()).join('\n');
}

const shellQuote = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;

/**
 * Runs the built `lake` on a real pseudo-terminal of the given size (util-linux `script`), as a person would:
 * stdout and stderr are a terminal, stdin too. Colour is off (NO_COLOR) so the screen compares as text.
 */
export async function runOnTerminal(
  args: readonly string[],
  options: { columns: number; rows: number; env?: Record<string, string> },
): Promise<TerminalRun> {
  const session = startOnTerminal(args, options);
  session.close();
  const code = await session.exited;
  return { code, screen: session.screen, raw: session.raw };
}

export interface TerminalSession {
  /** Types text, as keys (\r is Enter, \t TAB, \x03 ^C, \x04 ^D). */
  send(keys: string): void;
  /** Resolves with the screen so far once it matches, after `since` characters of it; rejects after the time. */
  waitFor(pattern: RegExp, options?: { since?: number; timeoutMs?: number }): Promise<string>;
  /** Characters shown so far (raw), to wait for what comes after. */
  readonly length: number;
  exited: Promise<number | null>;
  /** Everything shown so far, as a terminal leaves it. */
  readonly screen: string;
  /** Everything written so far, byte for byte. */
  readonly raw: string;
  /** Ends the input (as a closed terminal would). */
  close(): void;
}

/** A `lake` running interactively on a pseudo-terminal, driven key by key. */
export function startOnTerminal(
  args: readonly string[],
  options: { columns: number; rows: number; env?: Record<string, string> },
): TerminalSession {
  const command = `stty cols ${options.columns} rows ${options.rows}; exec ${shellQuote(process.execPath)} ${shellQuote(LAKE_BIN)} ${args.map(shellQuote).join(' ')}`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: hermeticHome(),
    TERM: 'xterm',
    NO_COLOR: '1',
    ...options.env,
  };
  const child = spawn('script', ['-qec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let raw = '';
  const listeners = new Set<() => void>();
  const onData = (d: Buffer): void => {
    raw += d.toString();
    for (const listener of listeners) listener();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve(code);
    }),
  );
  return {
    send: (keys) => void child.stdin.write(keys),
    get length() {
      return raw.length;
    },
    get screen() {
      return asShown(raw);
    },
    get raw() {
      return raw;
    },
    close: () => void child.stdin.end(),
    exited,
    waitFor(pattern, { since = 0, timeoutMs = 20_000 } = {}) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const screen = asShown(raw.slice(since));
          if (pattern.test(screen)) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(screen);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting for ${pattern}; the screen:\n${asShown(raw.slice(since)).slice(-2000)}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
  };
}
