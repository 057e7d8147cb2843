import { readFileSync } from 'node:fs';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';

async function readAll(ctx: CommandContext): Promise<string> {
  let text = '';
  for await (const chunk of ctx.io.stdin) text += String(chunk);
  return text;
}

/** SQL from the argument, from -f FILE, or from standard input (`-`, or nothing given in a pipe). */
export async function readSql(
  ctx: CommandContext,
  argument: string | undefined,
  file: string | undefined,
): Promise<string> {
  if (argument !== undefined && file !== undefined)
    throw usageError('Give the SQL as an argument or with -f, not both.');
  if (file !== undefined) {
    try {
      return file === '-' ? await readAll(ctx) : readFileSync(file, 'utf8');
    } catch (error) {
      throw new CliError(
        'file_unreadable',
        `Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}.`,
        EXIT.usage,
      );
    }
  }
  if (argument === '-') return readAll(ctx);
  if (argument !== undefined) return argument;
  if ((ctx.io.stdin as { isTTY?: boolean }).isTTY !== true) return readAll(ctx);
  throw usageError('Give the SQL to run.', 'For example: lake query "select * from lake.demo.orders limit 5"');
}
