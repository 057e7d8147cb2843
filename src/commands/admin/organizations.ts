import type { Command } from 'commander';
import type { Static } from '../../contract/schema.js';
import type {
  OnboardedOwner as OwnerSchema,
  Organization as OrganizationSchema,
} from '../../contract/organizations.js';
import { printFields, printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { checkedPageOptions, pageOptions, printList, printPage, when, type PageOptions } from '../listing.js';
import type { Row } from '../../render/table.js';
import { openAdminHome } from './open-home.js';
import { adminApi } from './remote.js';

type OrganizationObject = Static<typeof OrganizationSchema> & { owner?: Static<typeof OwnerSchema> };

const routes = async () => (await import('../../contract/routes.js')).ORGANIZATION_ROUTES;

/** The home's services with the wire forms, for the same objects the API answers. */
async function onHome(ctx: CommandContext) {
  const [{ services }, wire, { LOCAL_ADMIN }] = await Promise.all([
    openAdminHome(ctx),
    import('../../service/api/wire/organizations.js'),
    import('../../service/auth/audit-log.js'),
  ]);
  return { organizations: services.organizations, wire, actor: LOCAL_ADMIN };
}

function printOrganization(ctx: CommandContext, organization: OrganizationObject): void {
  if (ctx.json) return printJson(ctx.io, organization);
  printFields(ctx.io, [
    ['id', organization.id],
    ['name', organization.name],
    ['state', organization.deactivated === null ? 'active' : 'deactivated'],
    ...(organization.owner
      ? ([
          ['owner', organization.owner.user.id],
          ['owner token', organization.owner.token.secret],
        ] as [string, unknown][])
      : []),
  ]);
  if (organization.owner && ctx.io.isStdoutTTY)
    ctx.io.stderr.write("The owner's token is shown once. Hand it to them somewhere safe.\n");
}

/**
 * The service operator's commands: organizations and their first owners. Over the API they need the operator
 * token (`opr_…` from lake init) as --token or LAKE_TOKEN; on the home they need nothing but the home.
 */
export function registerAdminOrganizations(admin: Command, ctx: CommandContext): void {
  const org = admin.command('org').description('organizations (the service operator: lake init printed its token)');

  org
    .command('create')
    .description('create an organization, and with --owner-name its first owner and their token (shown once)')
    .argument('<name>', 'the organization’s name')
    .option('--owner-name <name>', 'its first owner’s name')
    .option('--owner-email <email>', 'its first owner’s email address')
    .action(async (name: string, o: { ownerName?: string; ownerEmail?: string }) => {
      const owner = o.ownerName === undefined ? undefined : { name: o.ownerName, email: o.ownerEmail ?? null };
      const api = await adminApi(ctx);
      if (api)
        return printOrganization(ctx, await api.read((await routes()).createOrganization, { body: { name, owner } }));
      const { organizations, wire, actor } = await onHome(ctx);
      const created = await organizations.create(actor, { name, owner });
      printOrganization(ctx, {
        ...wire.organizationObject(created.organization),
        ...(created.owner ? { owner: wire.onboardedOwnerObject(created.owner) } : {}),
      });
    });

  const ls = org.command('ls').description('list organizations, newest first');
  pageOptions(ls).action(async (o: PageOptions) => {
    const columns = ['id', 'name', 'state', 'permissions', 'created'];
    const row = (g: OrganizationObject): Row => ({
      id: g.id,
      name: g.name,
      state: g.deactivated === null ? 'active' : `deactivated ${when(g.deactivated)}`,
      permissions: g.table_permissions ? 'on' : 'off',
      created: when(g.created),
    });
    const api = await adminApi(ctx);
    if (api) return printList(ctx, o, { route: (await routes()).listOrganizations, columns, row });
    const limit = checkedPageOptions(ctx, o);
    const { organizations, wire } = await onHome(ctx);
    let after = o.startingAfter;
    if (after !== undefined) await organizations.cursor(after);
    const data: OrganizationObject[] = [];
    let more = false;
    do {
      const result = await organizations.list(o.all ? 100 : limit, after);
      data.push(...result.data.map(wire.organizationObject));
      more = result.hasMore;
      after = data.at(-1)?.id;
    } while (o.all && more);
    const page = { object: 'list' as const, data, has_more: more, next_cursor: more ? (after ?? null) : null };
    await printPage(ctx, o.output, page, columns, row);
  });

  org
    .command('rename')
    .description('rename an organization')
    .argument('<id>', 'the organization (org_…)')
    .argument('<name>', 'its new name')
    .action(async (id: string, name: string) => {
      const api = await adminApi(ctx);
      if (api)
        return printOrganization(
          ctx,
          await api.read((await routes()).renameOrganization, { params: { id }, body: { name } }),
        );
      const { organizations, wire, actor } = await onHome(ctx);
      printOrganization(ctx, wire.organizationObject(await organizations.rename(actor, id, name)));
    });

  for (const [verb, deactivated, description] of [
    ['deactivate', true, 'deactivate an organization: its credentials stop at once, its data is kept'],
    ['reactivate', false, 'reactivate a deactivated organization (its credentials work again)'],
  ] as const)
    org
      .command(verb)
      .description(description)
      .argument('<id>', 'the organization (org_…)')
      .action(async (id: string) => {
        const api = await adminApi(ctx);
        if (api) {
          const r = await routes();
          const route = deactivated ? r.deactivateOrganization : r.reactivateOrganization;
          return printOrganization(ctx, await api.read(route, { params: { id } }));
        }
        const { organizations, wire, actor } = await onHome(ctx);
        printOrganization(ctx, wire.organizationObject(await organizations.setDeactivated(actor, id, deactivated)));
      });

  org
    .command('add-owner')
    .description('add an owner to an organization, with their first token (shown once)')
    .argument('<id>', 'the organization (org_…)')
    .requiredOption('--name <name>', 'their name')
    .option('--email <email>', 'their email address')
    .action(async (id: string, o: { name: string; email?: string }) => {
      const body = { name: o.name, email: o.email ?? null };
      const api = await adminApi(ctx);
      let owner: Static<typeof OwnerSchema>;
      if (api) owner = await api.read((await routes()).addOrganizationOwner, { params: { id }, body });
      else {
        const { organizations, wire, actor } = await onHome(ctx);
        owner = wire.onboardedOwnerObject(await organizations.addOwner(actor, id, body));
      }
      if (ctx.json) return printJson(ctx.io, owner);
      printFields(ctx.io, [
        ['owner', owner.user.id],
        ['organization', owner.user.organization],
        ['token', owner.token.secret],
      ]);
      if (ctx.io.isStdoutTTY) ctx.io.stderr.write("The owner's token is shown once. Hand it to them somewhere safe.\n");
    });
}
