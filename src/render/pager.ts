import { spawn } from 'node:child_process';
import type { IOStreams, OutputStream } from './iostreams.js';

/** The pager to use: LAKE_PAGER, then PAGER, then `less -FRX` (quit if one screen, keep colours, leave the text). */
export function pagerCommand(env: Record<string, string | undefined>): string | undefined {
  const chosen = env.LAKE_PAGER ?? env.PAGER ?? 'less -FRX';
  // An empty pager, or cat, means no pager.
  return chosen.trim() === '' || chosen.trim() === 'cat' ? undefined : chosen;
}

export interface PagedOutput {
  /** Where to write what may be paged. */
  stream: OutputStream;
  /** Shows what was written: through the pager when it is longer than the screen, else as it is. */
  finish(): Promise<void>;
}

/**
 * Output that goes through a pager when it is longer than the terminal, as gh and git do: only when stdout is a
 * terminal (never in a pipe) and the pager is on (`--no-pager` turns it off). Elsewhere writes go straight out.
 */
export function pagedOutput(
  io: IOStreams,
  env: Record<string, string | undefined>,
  enabled: boolean,
  /** Lends the terminal to the pager when something else holds it (the SQL shell's line editor). */
  handover: <T>(use: () => Promise<T>) => Promise<T> = (use) => use(),
): PagedOutput {
  const command = pagerCommand(env);
  const rows = (io.stdout as { rows?: number }).rows ?? 0;
  if (!enabled || !command || !io.isStdoutTTY || rows <= 0) return { stream: io.stdout, finish: async () => {} };
  let text = '';
  const stream: OutputStream = {
    isTTY: true,
    columns: io.stdout.columns,
    write: (chunk: string | Uint8Array) => {
      text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return true;
    },
  } as OutputStream;
  return {
    stream,
    async finish() {
      const lines = text.split('\n').length - 1;
      if (lines < rows) {
        io.stdout.write(text);
        return;
      }
      await handover(
        () =>
          new Promise<void>((resolve) => {
            // The pager owns the terminal until it quits; lake waits, then goes on.
            const child = spawn(command, {
              shell: true,
              stdio: ['pipe', 'inherit', 'inherit'],
              env: { LESS: 'FRX', ...process.env, ...env },
            });
            child.on('error', () => {
              io.stdout.write(text);
              resolve();
            });
            // A shell that cannot find the pager exits 127 without reading: the text is shown as it is instead.
            child.on('close', (code) => {
              if (code === 127) io.stdout.write(text);
              resolve();
            });
            child.stdin.on('error', () => {});
            child.stdin.end(text);
          }),
      );
    },
  };
}
