import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { resolveHomeDir } from '../config/paths.js';
import { printFields, printJson } from '../render/record.js';
import type { CommandContext } from './context.js';

export function registerInit(program: Command, ctx: CommandContext): void {
  program
    .command('init')
    .description('create the local lake home (if needed) and a new personal access token for its owner')
    .option('--token-name <name>', 'name of the new token', 'lake init')
    .action(async (options: { tokenName: string }) => {
      const homeDir = resolveHomeDir(ctx.globals.home, ctx.env);
      const created = !existsSync(homeDir) || !existsSync(`${homeDir}/metadata.sqlite`);
      const [{ openHome }, { SCOPES }] = await Promise.all([import('../service/home/home.js'), import('../service/auth/scopes.js')]);
      const home = await openHome(homeDir);
      ctx.onClose(home.close);
      const issued = await home.credentials.issue({
        kind: 'pat',
        organizationId: home.organization.id,
        userId: home.owner.id,
        name: options.tokenName,
        scopes: SCOPES,
      });
      if (ctx.json) {
        return printJson(ctx.io, {
          object: 'init',
          home: homeDir,
          created,
          organization: { id: home.organization.id, name: home.organization.name },
          user: { id: home.owner.id, role: home.owner.role },
          token: { id: issued.record.id, secret: issued.secret, scopes: issued.record.scopes },
        });
      }
      printFields(ctx.io, [
        ['home', `${homeDir}${created ? ' (created)' : ' (already existed; nothing was changed)'}`],
        ['organization', home.organization.id],
        ['owner', home.owner.id],
        ['token', issued.secret],
      ]);
      if (ctx.io.isStdoutTTY) ctx.io.stderr.write('The token is shown once. Keep it somewhere safe.\n');
    });
}
