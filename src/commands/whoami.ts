import type { Command } from 'commander';
import { printFields, printJson, type Field } from '../render/record.js';
import type { CommandContext } from './context.js';

export interface WhoamiResponse {
  object: 'whoami';
  principal_kind: 'user' | 'service_key' | 'team_key';
  organization: { id: string; name: string };
  user: { id: string; name: string; email: string | null; role: string } | null;
  credential: { id: string; kind: string; name: string; hint: string; expires: number | null };
  scopes: string[];
}

export function registerWhoami(program: Command, ctx: CommandContext): void {
  program
    .command('whoami')
    .description('show who the current credential belongs to')
    .action(async () => {
      const whoami = await (await ctx.client()).get<WhoamiResponse>('/whoami');
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
