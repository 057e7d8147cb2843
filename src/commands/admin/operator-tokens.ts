import type { Command } from 'commander';
import { printFields, printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { usageError } from '../exit-codes.js';
import { openAdminHome } from './open-home.js';

/**
 * The service operator's own tokens, on the home only (the machine that holds the metadata store's URL): a new
 * one shown once, the list without secrets, and revocation at once, for a token that leaked or a person who left.
 */
export function registerAdminOperatorTokens(admin: Command, ctx: CommandContext): void {
  const tokens = admin
    .command('operator-token')
    .description('the service operator’s tokens (opr_…), on the home: create, ls, revoke');

  tokens
    .command('create')
    .description('a new operator token, shown once')
    .option('--name <name>', 'a name to tell it apart', 'operator')
    .action(async (o: { name: string }) => {
      const [{ services }, { LOCAL_ADMIN }] = await Promise.all([
        openAdminHome(ctx),
        import('../../service/auth/audit-log.js'),
      ]);
      const token = await services.operators.issue(o.name);
      await services.audit.record(
        null,
        LOCAL_ADMIN,
        'operator_token.created',
        { type: 'operator_token', id: token.id },
        {
          name: token.name,
        },
      );
      if (ctx.json)
        return printJson(ctx.io, { object: 'operator_token', id: token.id, name: token.name, secret: token.secret });
      printFields(ctx.io, [
        ['id', token.id],
        ['name', token.name],
        ['secret', token.secret],
      ]);
      if (ctx.io.isStdoutTTY) ctx.io.stderr.write('The secret is shown once. Keep it somewhere safe.\n');
    });

  tokens
    .command('ls')
    .description('every operator token, without secrets')
    .action(async () => {
      const { services } = await openAdminHome(ctx);
      const list = await services.operators.list();
      const data = list.map((t) => ({
        object: 'operator_token',
        id: t.id,
        name: t.name,
        hint: t.hint,
        created: t.created,
        last_used: t.lastUsed,
        revoked: t.revoked,
      }));
      if (ctx.json) return printJson(ctx.io, { object: 'list', data, has_more: false, next_cursor: null });
      const { printRows, when } = await import('../listing.js');
      await printRows(
        ctx,
        undefined,
        ['id', 'name', 'hint', 'created', 'last_used', 'revoked'],
        data.map((t) => ({
          ...t,
          created: when(t.created),
          last_used: t.last_used === null ? '' : when(t.last_used),
          revoked: t.revoked === null ? '' : when(t.revoked),
        })),
      );
    });

  tokens
    .command('revoke')
    .description('revoke an operator token at once')
    .argument('<id>', 'the token (opt_…)')
    .action(async (id: string) => {
      const [{ services }, { LOCAL_ADMIN }] = await Promise.all([
        openAdminHome(ctx),
        import('../../service/auth/audit-log.js'),
      ]);
      if (!(await services.operators.revoke(id)))
        throw usageError(`There is no live operator token '${id}'.`, 'List them with `lake admin operator-token ls`.');
      await services.audit.record(null, LOCAL_ADMIN, 'operator_token.revoked', { type: 'operator_token', id });
      if (ctx.json) return printJson(ctx.io, { object: 'operator_token', id, revoked: true });
      ctx.io.stderr.write(`Revoked ${id}.\n`);
    });
}
