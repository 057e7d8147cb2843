import type { CommandContext } from '../context.js';
import { usageError } from '../exit-codes.js';
import { readStdinText, readTextFile } from '../text-input.js';

/** SQL from the argument, from -f FILE, or from standard input (`-`, or nothing given in a pipe). */
export async function readSql(
  ctx: CommandContext,
  argument: string | undefined,
  file: string | undefined,
): Promise<string> {
  if (argument !== undefined && file !== undefined)
    throw usageError('Give the SQL as an argument or with -f, not both.');
  if (file !== undefined) return file === '-' ? readStdinText(ctx) : readTextFile(file);
  if (argument === '-') return readStdinText(ctx);
  if (argument !== undefined) return argument;
  if ((ctx.io.stdin as { isTTY?: boolean }).isTTY !== true) return readStdinText(ctx);
  throw usageError('Give the SQL to run.', 'For example: lake query "select * from lake.demo.orders limit 5"');
}
