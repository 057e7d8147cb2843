import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import { readStdinText } from '../text-input.js';

async function readAllStdin(ctx: CommandContext): Promise<string> {
  return (await readStdinText(ctx, true)).replace(/\r?\n$/, '');
}

/**
 * The password of a new source or destination: from standard input (`--password-stdin`), none (`--no-password`), or
 * typed at a hidden prompt on a terminal. Without a terminal and without either flag, a usage error: a script that
 * forgot its password would otherwise make a source that cannot connect, and say nothing.
 */
export async function readPassword(ctx: CommandContext, options: Record<string, unknown>): Promise<string | undefined> {
  if (options.password === false) return undefined;
  const typed = await readSecret(ctx, 'Password', options.passwordStdin === true);
  if (typed === undefined) {
    throw usageError(
      'No password: standard input is not a terminal, so there is no prompt.',
      'Pipe it in with --password-stdin, or say --no-password when the server needs none.',
    );
  }
  return typed;
}

/**
 * A secret from standard input (`--…-stdin`), or typed at a prompt that does not echo, on a terminal. In a pipe
 * without the flag there is no secret: scripts say where theirs comes from.
 */
export async function readSecret(ctx: CommandContext, label: string, fromStdin: boolean): Promise<string | undefined> {
  if (fromStdin) return readAllStdin(ctx);
  const stdin = ctx.io.stdin as NodeJS.ReadStream;
  if (!stdin.isTTY || !ctx.io.isStderrTTY) return undefined;
  // readline echoes what is typed to its output: a real stream that drops everything keeps the secret off the screen.
  const muted = new Writable({ write: (_chunk, _encoding, done) => done() });
  const rl = createInterface({ input: stdin, output: muted, terminal: true });
  ctx.io.stderr.write(`${label}: `);
  let answered = false;
  try {
    return await new Promise<string>((resolve, reject) => {
      rl.question('', (answer) => {
        answered = true;
        resolve(answer);
      });
      // ^C at the prompt (the terminal is raw: readline reports it) or ^D: nothing is created.
      rl.on('SIGINT', () =>
        reject(
          new CliError('interrupted', 'Interrupted at the password prompt; nothing was created.', EXIT.interrupted),
        ),
      );
      rl.on('close', () => {
        if (!answered)
          reject(
            new CliError(
              'interrupted',
              'The password prompt was closed before an answer; nothing was created.',
              EXIT.interrupted,
            ),
          );
      });
    });
  } finally {
    rl.close();
    ctx.io.stderr.write('\n');
  }
}
