import type { Command } from 'commander';
import { printFields, printJson, type Field } from '../render/record.js';
import type { WhoAmIObject } from '../contract/types.js';
import type { CommandContext } from './context.js';

/** GET /whoami's answer, as the contract types it. */
export type WhoamiResponse = WhoAmIObject;

/** Asks the service who the current credential is (the contract is loaded only when a command runs). */
export async function whoAmI(ctx: CommandContext): Promise<WhoamiResponse> {
  const { SERVICE_ROUTES } = await import('../contract/routes.js');
  return (await ctx.client()).read(SERVICE_ROUTES.whoAmI, {});
}

export function registerWhoami(program: Command, ctx: CommandContext): void {
  program
    .command('whoami')
    .description('show who the current credential belongs to')
    .action(async () => {
      const whoami = await whoAmI(ctx);
      if (ctx.json) return printJson(ctx.io, whoami);
      printFields(ctx.io, [
        ['organization', `${whoami.organization.name} (${whoami.organization.id})`],
        ['principal', whoami.principal_kind],
        ...(whoami.user ? [['user', `${whoami.user.name} (${whoami.user.id}, ${whoami.user.role})`] as Field] : []),
        ['credential', `${whoami.credential.name} (${whoami.credential.id}, …${whoami.credential.hint})`],
        ['scopes', whoami.scopes.join(' ')],
      ]);
    });
}
