import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import type { CommandContext } from '../context.js';

async function readAllStdin(ctx: CommandContext): Promise<string> {
  let text = '';
  for await (const chunk of ctx.io.stdin) text += String(chunk);
  return text.replace(/\r?\n$/, '');
}

/**
 * A secret from standard input (`--…-stdin`), or typed at a prompt that does not echo, on a terminal. In a pipe
 * without the flag there is no secret: scripts say where theirs comes from.
 */
export async function readSecret(ctx: CommandContext, label: string, fromStdin: boolean): Promise<string | undefined> {
  if (fromStdin) return readAllStdin(ctx);
  const stdin = ctx.io.stdin as NodeJS.ReadStream;
  if (!stdin.isTTY || !ctx.io.isStderrTTY) return undefined;
  const muted = { write: () => true } as unknown as Writable;
  const rl = createInterface({ input: stdin, output: muted, terminal: true });
  ctx.io.stderr.write(`${label}: `);
  try {
    return await new Promise<string>((resolve) => rl.question('', resolve));
  } finally {
    rl.close();
    ctx.io.stderr.write('\n');
  }
}
