import { PRECEDENCE_RULE } from '../../config/settings.js';
import type { Command } from 'commander';
import { printFields, printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import { whoAmI, type WhoamiResponse } from '../whoami.js';
import { maskSetting } from '../config/index.js';
import { readStdinText } from '../text-input.js';

async function readStdin(ctx: CommandContext): Promise<string> {
  return (await readStdinText(ctx, true)).trim();
}

export function registerAuth(program: Command, ctx: CommandContext): void {
  const auth = program.command('auth').description('log in to a lake service and see which credential is in use');

  auth
    .command('login')
    .description(
      'check --base-url and --token against the service, then save them in the current profile (or --profile)',
    )
    .option('--with-token', 'read the token from standard input, keeping it out of shell history')
    .action(async (options: { withToken?: boolean }) => {
      const store = ctx.profiles();
      const name = ctx.profileName(store);
      // Logging in to a profile makes it if it is new (as gh does); an existing one keeps its service unless told.
      const known = store.names().includes(name) ? store.profile(name) : undefined;
      const baseUrl = ctx.globals.baseUrl ?? ctx.env.LAKE_BASE_URL ?? known?.base_url;
      if (!baseUrl)
        throw usageError(
          'Name the service with --base-url URL.',
          'For example: lake auth login --base-url http://127.0.0.1:8080 --token pat_…',
        );
      const token = options.withToken ? await readStdin(ctx) : (ctx.globals.token ?? ctx.env.LAKE_TOKEN);
      if (!token) throw usageError('Give the token with --token, LAKE_TOKEN or --with-token.');
      // Verify before saving, so a typo is caught now and not at the next command.
      ctx.globals = { ...ctx.globals, baseUrl, token };
      ctx.profileMayBeNew = true;
      const whoami = await whoAmI(ctx);
      await store.set(name, 'base_url', baseUrl);
      await store.set(name, 'token', token);
      if (ctx.json) return printJson(ctx.io, { object: 'login', profile: name, base_url: baseUrl, whoami });
      ctx.io.stderr.write(
        `Logged in to ${new URL(baseUrl).origin} as ${whoami.user?.name ?? whoami.credential.name} (${whoami.organization.id}); saved in profile '${name}'.\n`,
      );
    });

  auth
    .command('logout')
    .description('forget the token saved in the current profile (or --profile)')
    .action(async () => {
      const store = ctx.profiles();
      const name = ctx.profileName(store);
      const had = store.profile(name).token !== undefined;
      await store.unset(name, 'token');
      if (ctx.json) return printJson(ctx.io, { object: 'logout', profile: name, removed: had });
      ctx.io.stderr.write(had ? `Removed the token from profile '${name}'.\n` : `Profile '${name}' had no token.\n`);
    });

  auth
    .command('status')
    .description('show where commands go, which credential they use and whom it belongs to')
    .action(async () => {
      const settings = await ctx.settings();
      const remote = settings.baseUrl.value !== undefined;
      const tokenSource =
        remote || settings.token.source === 'flag' || settings.token.source === 'env' ? settings.token.source : 'home';
      let whoami: WhoamiResponse | undefined;
      let problem: unknown;
      try {
        whoami = await whoAmI(ctx);
      } catch (error) {
        problem = error;
      }
      const status = {
        object: 'auth_status',
        mode: remote ? 'remote' : 'local',
        base_url: settings.baseUrl.value ?? null,
        base_url_source: settings.baseUrl.source,
        home: remote ? null : settings.homeDir.value,
        home_source: remote ? null : settings.homeDir.source,
        token:
          tokenSource === 'home' ? 'owner token of the home' : (maskSetting('token', settings.token.value) ?? null),
        token_source: tokenSource,
        whoami: whoami ?? null,
        precedence: PRECEDENCE_RULE,
      };
      if (ctx.json) printJson(ctx.io, status);
      else {
        printFields(ctx.io, [
          ['mode', status.mode],
          [
            remote ? 'base url' : 'home',
            remote
              ? `${status.base_url} (from ${status.base_url_source})`
              : `${status.home} (from ${status.home_source})`,
          ],
          ['token', `${status.token ?? 'none'} (from ${tokenSource})`],
          [
            'signed in as',
            whoami ? `${whoami.user?.name ?? whoami.credential.name} in ${whoami.organization.id}` : 'not signed in',
          ],
        ]);
        ctx.io.stdout.write(`\n${PRECEDENCE_RULE}\n`);
      }
      if (problem)
        throw problem instanceof Error ? problem : new CliError('auth_status_failed', String(problem), EXIT.failed);
    });
}
