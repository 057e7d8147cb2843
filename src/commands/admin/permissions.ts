import type { Command } from 'commander';
import type { LakeClient } from '../../client/lake-client.js';
import type { GranteeKind } from '../../service/auth/permissions.js';
import { printFields, printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { usageError } from '../exit-codes.js';
import { fetchAll } from '../listing.js';
import { openAdminHome } from './open-home.js';
import { adminApi } from './remote.js';

const routes = async () => (await import('../../contract/routes.js')).ORGANIZATION_ROUTES;

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
      const api = await adminApi(ctx);
      if (api) {
        await api.read((await routes()).setTablePermissions, { body: { enabled: state === 'on' } });
        if (ctx.json) return printJson(ctx.io, { object: 'table_permissions', enabled: state === 'on' });
        ctx.io.stderr.write(`Table permissions are ${state}.\n`);
        return;
      }
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
    if (grantee.kind === 'role' && !ROLES.includes(grantee.id)) throw usageError(`Roles are ${ROLES.join(', ')}.`);
    const api = await adminApi(ctx);
    if (api) return changeOverApi(ctx, api, verb, target, grantee, options.to);
    const { home, services } = await openAdminHome(ctx);
    const org = home.organization.id;
    if (grantee.kind === 'user') grantee.id = userIdOf(await home.directory.users(org), grantee.id);
    if (grantee.kind === 'credential' && (await home.credentials.get(grantee.id))?.organizationId !== org)
      throw usageError(`There is no credential '${grantee.id}' in this home.`);
    if (verb === 'grant') {
      const grant = await services.permissions.grant(org, target.schema, target.table, grantee.kind, grantee.id);
      return printGrant(ctx, { ...grant, grantee: `${grant.granteeKind}:${grant.grantee}` }, options.to);
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
      const api = await adminApi(ctx);
      let enabled: boolean;
      let data: { object: string; id: string; schema: string; table: string; grantee: string; created: number }[];
      if (api) {
        const r = await routes();
        enabled = (await api.read(r.getTablePermissions, {})).enabled;
        data = (await api.read(r.listGrants, {})).data.map((g) => ({
          ...g,
          grantee: `${g.grantee_kind}:${g.grantee}`,
          grantee_kind: undefined,
        }));
      } else {
        const { home, services } = await openAdminHome(ctx);
        enabled = await services.permissions.enabled(home.organization.id);
        data = (await services.permissions.list(home.organization.id)).map((g) => ({
          object: 'grant',
          id: g.id,
          schema: g.schema,
          table: g.table,
          grantee: `${g.granteeKind}:${g.grantee}`,
          created: g.created,
        }));
      }
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
      const api = await adminApi(ctx);
      const users = api ? await fetchAll(api, (await routes()).listUsers) : undefined;
      const objects = users
        ? users.map((u) => ({ ...u, organization: undefined }))
        : await (async () => {
            const { home } = await openAdminHome(ctx);
            return (await home.directory.users(home.organization.id)).map((u) => ({
              object: 'user',
              id: u.id,
              name: u.name,
              email: u.email,
              role: u.role,
              created: u.created,
              deactivated: u.deactivated,
            }));
          })();
      if (ctx.json) return printJson(ctx.io, { object: 'list', data: objects, has_more: false, next_cursor: null });
      const { printRows, when } = await import('../listing.js');
      await printRows(
        ctx,
        undefined,
        // `state` last: scripts that read the earlier columns by position keep working.
        ['id', 'name', 'email', 'role', 'created', 'state'],
        objects.map((u) => ({
          id: u.id,
          name: u.name,
          email: u.email ?? '',
          role: u.role,
          state: u.deactivated === null ? 'active' : 'deactivated',
          created: when(u.created),
        })),
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
      const api = await adminApi(ctx);
      if (api) {
        const made = await api.read((await routes()).createUser, {
          body: { name: options.name, email: options.email ?? null, role: options.role as 'member' },
        });
        if (ctx.json) return printJson(ctx.io, made);
        return printFields(ctx.io, [
          ['id', made.id],
          ['name', made.name],
          ['role', made.role],
        ]);
      }
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

  // Changing people goes through the API: the service's own rules (an organization keeps an active owner) hold the
  // same way here; without a base URL that is the home's API, as its owner.
  const changeUser = async (id: string, change: 'deactivate' | 'reactivate' | { role: string }): Promise<void> => {
    const r = await routes();
    const client = await ctx.client();
    const user =
      change === 'deactivate'
        ? await client.read(r.deactivateUser, { params: { id } })
        : change === 'reactivate'
          ? await client.read(r.reactivateUser, { params: { id } })
          : await client.read(r.updateUser, { params: { id }, body: { role: change.role as 'member' } });
    if (ctx.json) return printJson(ctx.io, user);
    printFields(ctx.io, [
      ['id', user.id],
      ['name', user.name],
      ['role', user.role],
      ['state', user.deactivated === null ? 'active' : 'deactivated'],
    ]);
  };
  user
    .command('role')
    .description("change a person's role (an organization keeps at least one active owner)")
    .argument('<id>', 'the person (usr_…)')
    .argument('<role>', ROLES.join(', '))
    .action(async (id: string, role: string) => {
      if (!ROLES.includes(role)) throw usageError(`Roles are ${ROLES.join(', ')}.`);
      await changeUser(id, { role });
    });
  user
    .command('deactivate')
    .description('deactivate a person: their tokens stop at once, what they made stays')
    .argument('<id>', 'the person (usr_…)')
    .action((id: string) => changeUser(id, 'deactivate'));
  user
    .command('reactivate')
    .description('reactivate a deactivated person')
    .argument('<id>', 'the person (usr_…)')
    .action((id: string) => changeUser(id, 'reactivate'));
}

/** A grant made, as lake admin has always printed it (the grantee as kind:id). */
function printGrant(
  ctx: CommandContext,
  grant: { id: string; schema: string; table: string; grantee: string },
  said: string,
): void {
  if (ctx.json)
    return printJson(ctx.io, {
      object: 'grant',
      id: grant.id,
      schema: grant.schema,
      table: grant.table,
      grantee: grant.grantee,
    });
  ctx.io.stderr.write(`Granted ${grant.schema}.${grant.table} to ${said}.\n`);
}

/** A grant or revoke over the API: a user named by name is looked up among the organization's people. */
async function changeOverApi(
  ctx: CommandContext,
  api: LakeClient,
  verb: 'grant' | 'revoke',
  target: Target,
  grantee: { kind: GranteeKind; id: string },
  said: string,
): Promise<void> {
  const r = await routes();
  if (grantee.kind === 'user') grantee.id = userIdOf(await fetchAll(api, r.listUsers), grantee.id);
  if (verb === 'grant') {
    const grant = await api.read(r.createGrant, {
      body: { schema: target.schema, table: target.table, grantee_kind: grantee.kind, grantee: grantee.id },
    });
    return printGrant(ctx, { ...grant, grantee: `${grant.grantee_kind}:${grant.grantee}` }, said);
  }
  const existing = (await api.read(r.listGrants, {})).data.find(
    (g) =>
      g.schema === target.schema &&
      g.table === target.table &&
      g.grantee_kind === grantee.kind &&
      g.grantee === grantee.id,
  );
  if (existing) await api.read(r.revokeGrant, { params: { id: existing.id } });
  if (ctx.json)
    return printJson(ctx.io, {
      object: 'grant_revocation',
      schema: target.schema,
      table: target.table,
      grantee: said,
      revoked: existing !== undefined,
    });
  ctx.io.stderr.write(
    existing ? `Revoked ${target.schema}.${target.table} from ${said}.\n` : `No such grant; nothing changed.\n`,
  );
}
