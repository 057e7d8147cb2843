import type { Command } from 'commander';
import { printFields, printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { usageError } from '../exit-codes.js';
import { pageOptions, printList, type PageOptions } from '../listing.js';

/** The contract's routes, loaded when a command runs (not for --help). */
const routes = async () => (await import('../../contract/routes.js')).CREDENTIAL_ROUTES;

const when = (s: number | null): string => (s === null ? '' : new Date(s * 1000).toISOString().replace('.000Z', 'Z'));

export function registerPats(program: Command, ctx: CommandContext): void {
  const pats = program.command('pats').description('your personal access tokens: create, list, revoke');

  pats
    .command('create')
    .description('create a token (its secret is shown once)')
    .requiredOption('--name <name>', 'a name to tell it apart')
    .requiredOption('--scopes <list>', 'comma-separated scopes (docs/api.md lists them)')
    .option('--expires-in-days <n>', 'expire after this many days')
    .action(async (o: { name: string; scopes: string; expiresInDays?: string }) => {
      const days = o.expiresInDays === undefined ? undefined : Number(o.expiresInDays);
      if (days !== undefined && !Number.isInteger(days)) throw usageError('--expires-in-days must be a whole number.');
      const body = {
        name: o.name,
        scopes: o.scopes.split(/[\s,]+/).filter(Boolean),
        ...(days === undefined ? {} : { expires_in_days: days }),
      };
      const created = await (await ctx.client()).read((await routes()).createPersonalAccessToken, { body });
      if (ctx.json) return printJson(ctx.io, created);
      printFields(ctx.io, [
        ['id', created.id],
        ['name', created.name],
        ['scopes', created.scopes.join(' ')],
        ['expires', when(created.expires) || 'never'],
        ['secret', created.secret],
      ]);
      if (ctx.io.isStdoutTTY) ctx.io.stderr.write('The secret is shown once. Keep it somewhere safe.\n');
    });

  pageOptions(
    pats.command('ls').description('list your tokens (never their secrets), with when each was last used'),
  ).action(async (o: PageOptions) => {
    await printList(ctx, o, {
      route: (await routes()).listPersonalAccessTokens,
      columns: ['id', 'name', 'scopes', 'last_used', 'expires', 'revoked'],
      row: (p) => ({
        id: p.id,
        name: p.name,
        scopes: p.scopes.join(' '),
        last_used: when(p.last_used),
        expires: when(p.expires),
        revoked: when(p.revoked),
      }),
    });
  });

  pats
    .command('revoke')
    .description('revoke a token: it stops working at once')
    .argument('<id>', 'token id (tok_…)')
    .action(async (id: string) => {
      const revoked = await (await ctx.client()).read((await routes()).revokePersonalAccessToken, { params: { id } });
      if (ctx.json) return printJson(ctx.io, revoked);
      ctx.io.stderr.write(`lake: revoked ${revoked.id} (${revoked.name})\n`);
    });
}
