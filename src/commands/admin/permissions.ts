import type { Command } from 'commander';
import type { GranteeKind } from '../../service/auth/permissions.js';
import { printFields, printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { usageError } from '../exit-codes.js';
import { openAdminHome } from './open-home.js';

const ROLES = ['owner', 'admin', 'member'];

interface Target {
  schema: string;
  table: string;
}

function parseTarget(text: string): Target {
  const dot = text.indexOf('.');
  if (dot <= 0 || dot === text.length - 1)
    throw usageError(`Name what to grant as <schema>.<table> or <schema>.*, not '${text}'.`);
  return { schema: text.slice(0, dot), table: text.slice(dot + 1) };
}

/** A user by id or by name (a name several people share must be given as the id). */
function userIdOf(users: readonly { id: string; name: string }[], ref: string): string {
  const byId = users.find((u) => u.id === ref);
  if (byId) return byId.id;
  const named = users.filter((u) => u.name === ref || u.name.toLowerCase() === ref.toLowerCase());
  if (named.length === 1) return (named[0] as { id: string }).id;
  if (named.length > 1)
    throw usageError(`${named.length} people are named '${ref}': ${named.map((u) => u.id).join(', ')}. Give the id.`);
  throw usageError(`There is no user '${ref}' in this home (by id or name).`, 'List them with `lake admin user ls`.');
}

function parseGrantee(text: string): { kind: GranteeKind; id: string } {
  const match = /^(user|role|credential):(.+)$/.exec(text);
  if (!match)
    throw usageError(
      `--to takes user:<usr_… or name>, role:<${ROLES.join('|')}> or credential:<tok_…|key_…>, not '${text}'.`,
    );
  return { kind: match[1] as GranteeKind, id: match[2] as string };
}

export function registerAdminPermissions(admin: Command, ctx: CommandContext): void {
  admin
    .command('permissions')
    .description('turn table permissions on or off for the organization (off by default)')
    .argument('<state>', 'on or off')
    .action(async (state: string) => {
      if (state !== 'on' && state !== 'off') throw usageError('Say on or off.');
      const { home, services } = await openAdminHome(ctx);
      await services.permissions.setEnabled(home.organization.id, state === 'on');
      if (ctx.json)
        return printJson(ctx.io, {
          object: 'table_permissions',
          organization: home.organization.id,
          enabled: state === 'on',
        });
      ctx.io.stderr.write(`Table permissions are ${state} for ${home.organization.id}.\n`);
    });

  const change = async (verb: 'grant' | 'revoke', targetText: string, options: { to: string }): Promise<void> => {
    const target = parseTarget(targetText);
    const grantee = parseGrantee(options.to);
    const { home, services } = await openAdminHome(ctx);
    const org = home.organization.id;
    if (grantee.kind === 'user') grantee.id = userIdOf(await home.directory.users(org), grantee.id);
    if (grantee.kind === 'role' && !ROLES.includes(grantee.id)) throw usageError(`Roles are ${ROLES.join(', ')}.`);
    if (grantee.kind === 'credential' && (await home.credentials.get(grantee.id))?.organizationId !== org)
      throw usageError(`There is no credential '${grantee.id}' in this home.`);
    if (verb === 'grant') {
      const grant = await services.permissions.grant(org, target.schema, target.table, grantee.kind, grantee.id);
      if (ctx.json)
        return printJson(ctx.io, {
          object: 'grant',
          id: grant.id,
          schema: grant.schema,
          table: grant.table,
          grantee: `${grant.granteeKind}:${grant.grantee}`,
        });
      ctx.io.stderr.write(`Granted ${target.schema}.${target.table} to ${options.to}.\n`);
      return;
    }
    const removed = await services.permissions.revoke(org, target.schema, target.table, grantee.kind, grantee.id);
    if (ctx.json)
      return printJson(ctx.io, {
        object: 'grant_revocation',
        schema: target.schema,
        table: target.table,
        grantee: options.to,
        revoked: removed,
      });
    ctx.io.stderr.write(
      removed ? `Revoked ${target.schema}.${target.table} from ${options.to}.\n` : `No such grant; nothing changed.\n`,
    );
  };

  admin
    .command('grant')
    .description('let a user, a role or a credential read a table, a view, or a whole schema (<schema>.*)')
    .argument('<target>', '<schema>.<table> or <schema>.*')
    .requiredOption('--to <grantee>', 'user:<usr_…>, role:<owner|admin|member> or credential:<tok_…|key_…>')
    .action((target: string, options: { to: string }) => change('grant', target, options));

  admin
    .command('revoke')
    .description('remove a grant')
    .argument('<target>', '<schema>.<table> or <schema>.*')
    .requiredOption('--to <grantee>', 'user:<usr_…>, role:<owner|admin|member> or credential:<tok_…|key_…>')
    .action((target: string, options: { to: string }) => change('revoke', target, options));

  admin
    .command('grants')
    .description('table grants')
    .command('ls')
    .description('list every grant of the organization, and whether permissions are on')
    .action(async () => {
      const { home, services } = await openAdminHome(ctx);
      const grants = await services.permissions.list(home.organization.id);
      const enabled = await services.permissions.enabled(home.organization.id);
      const data = grants.map((g) => ({
        object: 'grant',
        id: g.id,
        schema: g.schema,
        table: g.table,
        grantee: `${g.granteeKind}:${g.grantee}`,
        created: g.created,
      }));
      if (ctx.json)
        return printJson(ctx.io, {
          object: 'list',
          data,
          has_more: false,
          next_cursor: null,
          table_permissions: enabled,
        });
      if (ctx.io.isStdoutTTY) ctx.io.stderr.write(`Table permissions are ${enabled ? 'on' : 'off'}.\n`);
      const { printRows, when } = await import('../listing.js');
      await printRows(
        ctx,
        undefined,
        ['table', 'grantee', 'id', 'created'],
        data.map((g) => ({ table: `${g.schema}.${g.table}`, grantee: g.grantee, id: g.id, created: when(g.created) })),
      );
    });

  const user = admin.command('user').description('people of the organization');
  user
    .command('ls')
    .description('list the people of the organization (their ids are what grants and admin pat create --user take)')
    .action(async () => {
      const { home } = await openAdminHome(ctx);
      const users = await home.directory.users(home.organization.id);
      const objects = users.map((u) => ({
        object: 'user',
        id: u.id,
        name: u.name,
        email: u.email,
        role: u.role,
        created: u.created,
      }));
      if (ctx.json) return printJson(ctx.io, { object: 'list', data: objects, has_more: false, next_cursor: null });
      const { printRows, when } = await import('../listing.js');
      await printRows(
        ctx,
        undefined,
        ['id', 'name', 'email', 'role', 'created'],
        objects.map((u) => ({ ...u, email: u.email ?? '', created: when(u.created) })),
      );
    });
  user
    .command('create')
    .description('add a person (to grant tables to, or to give a token with admin pat create --user)')
    .requiredOption('--name <name>', 'their name')
    .option('--email <email>', 'their email address')
    .option('--role <role>', `one of ${ROLES.join(', ')}`, 'member')
    .action(async (options: { name: string; email?: string; role: string }) => {
      if (!ROLES.includes(options.role)) throw usageError(`Roles are ${ROLES.join(', ')}.`);
      const { home, services } = await openAdminHome(ctx);
      const user = await home.directory.createUser(
        home.organization.id,
        options.name,
        options.role as 'member',
        options.email ?? null,
      );
      await services.audit.recordLocal(
        home.organization.id,
        'user.created',
        { type: 'user', id: user.id },
        { name: user.name, role: user.role },
      );
      if (ctx.json)
        return printJson(ctx.io, { object: 'user', id: user.id, name: user.name, email: user.email, role: user.role });
      printFields(ctx.io, [
        ['id', user.id],
        ['name', user.name],
        ['role', user.role],
      ]);
    });
}
