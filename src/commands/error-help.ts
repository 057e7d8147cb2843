import { ERROR_CATALOGUE } from '../contract/errors.js';
import { printJson } from '../render/record.js';
import type { CommandContext } from './context.js';
import { usageError } from './exit-codes.js';

/**
 * `lake help errors [code]`: what an error code means and what to do, from the same catalogue the API serves at
 * GET /errors/{code}. It is what a local-mode error's docs line points to, since the local lake has no web address.
 */
export function printErrorHelp(ctx: CommandContext, code: string | undefined): void {
  const catalogue = ERROR_CATALOGUE as Record<string, { status: number; type: string; description: string }>;
  if (code === undefined) {
    if (ctx.json)
      return printJson(ctx.io, {
        object: 'list',
        data: Object.entries(catalogue).map(([name, d]) => ({ code: name, ...d })),
      });
    const width = Math.max(...Object.keys(catalogue).map((name) => name.length));
    for (const [name, d] of Object.entries(catalogue))
      ctx.io.stdout.write(`${name.padEnd(width)}  ${d.status}  ${d.description}\n`);
    return;
  }
  const found = catalogue[code];
  if (!found) throw usageError(`There is no error code '${code.slice(0, 64)}'.`, 'lake help errors lists them.');
  if (ctx.json) return printJson(ctx.io, { object: 'error_code', code, ...found });
  ctx.io.stdout.write(`${code} (HTTP ${found.status}, ${found.type})\n${found.description}\n`);
}
