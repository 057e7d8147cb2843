import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { resolveHomeDir } from '../config/paths.js';
import { printFields, printJson } from '../render/record.js';
import type { CommandContext } from './context.js';
import { localAuditLog, localHomeSettings } from './admin/open-home.js';
import { CliError, EXIT } from './exit-codes.js';
import type { HomeOptions } from '../service/home/home.js';

/** What each replica must be given: the store's URL without its password, and the key files. */
function replicaEnvironment(options: HomeOptions): Record<string, string> {
  const url = new URL(options.metadataUrl as string);
  if (url.password) url.password = '****';
  // libpq also takes a password (and an SSL key's passphrase) as a parameter of the URL.
  for (const key of [...url.searchParams.keys()]) if (/password/i.test(key)) url.searchParams.set(key, '****');
  return {
    LAKE_METADATA_URL: url.toString(),
    LAKE_SIGNING_KEY_FILE: options.signingKeyFile as string,
    LAKE_SECRETS_KEY_FILE: options.secretsKeyFile as string,
    LAKE_DATA_DIR: options.dataDir ?? '(a directory every replica mounts)',
  };
}

export function registerInit(program: Command, ctx: CommandContext): void {
  program
    .command('init')
    .description(
      'create the local lake home (if needed), a new personal access token for its owner and an operator token',
    )
    .option('--token-name <name>', 'name of the new token', 'lake init')
    .option(
      '--metadata-url <url>',
      'keep metadata on this PostgreSQL database, shared by lake serve replicas (LAKE_METADATA_URL)',
    )
    .action(async (options: { tokenName: string; metadataUrl?: string }) => {
      const homeDir = resolveHomeDir(ctx.globals.home, ctx.env);
      const [
        { openHome },
        { SCOPES },
        { sharedStoreOptions },
        { OperatorCredentials },
        { LOCAL_ADMIN },
        { isPostgresUrl },
      ] = await Promise.all([
        import('../service/home/home.js'),
        import('../service/auth/scopes.js'),
        import('./init-shared.js'),
        import('../service/auth/operator-credentials.js'),
        import('../service/auth/audit-log.js'),
        import('../service/store/database.js'),
      ]);
      // The flag is the setting, checked as LAKE_METADATA_URL is: a URL of another database (mysql://…) would
      // otherwise make a local SQLite home instead of the shared store asked for.
      if (options.metadataUrl !== undefined && !isPostgresUrl(options.metadataUrl))
        throw new CliError(
          'invalid_setting',
          '--metadata-url must be a PostgreSQL URL (postgres://user@host:5432/database).',
          EXIT.usage,
          'Give the PostgreSQL database every replica shares, then run the command again.',
        );
      const fromEnv = (await localHomeSettings(ctx)).home;
      const shared = options.metadataUrl ?? fromEnv.metadataUrl;
      const homeOptions = shared ? sharedStoreOptions(homeDir, { ...fromEnv, metadataUrl: shared }) : fromEnv;
      const created = shared ? false : !existsSync(homeDir) || !existsSync(`${homeDir}/metadata.sqlite`);
      const home = await openHome(homeDir, homeOptions);
      ctx.onClose(home.close);
      const issued = await home.credentials.issue({
        kind: 'pat',
        organizationId: home.organization.id,
        userId: home.owner.id,
        name: options.tokenName,
        scopes: SCOPES,
      });
      // The service operator's token: it creates and deactivates organizations over the API, and is in none.
      const operator = await new OperatorCredentials(home.db).issue(options.tokenName);
      // Run again on a home that exists (a shared store's, say), init mints two more credentials: recorded as
      // `lake admin operator-token create` and `lake admin pat create` record theirs.
      const audit = await localAuditLog(home);
      await audit.credentialCreated(issued.record);
      await audit.record(
        null,
        LOCAL_ADMIN,
        'operator_token.created',
        { type: 'operator_token', id: operator.id },
        {
          name: operator.name,
        },
      );
      if (ctx.json) {
        return printJson(ctx.io, {
          object: 'init',
          home: homeDir,
          created,
          ...(shared ? { metadata: 'postgres', replica_environment: replicaEnvironment(homeOptions) } : {}),
          organization: { id: home.organization.id, name: home.organization.name },
          user: { id: home.owner.id, role: home.owner.role },
          token: { id: issued.record.id, secret: issued.secret, scopes: issued.record.scopes },
          operator_token: { id: operator.id, secret: operator.secret },
        });
      }
      printFields(ctx.io, [
        // Not "nothing was changed": each run makes the two tokens below.
        ['home', `${homeDir}${created ? ' (created)' : ' (already existed)'}`],
        ['organization', home.organization.id],
        ['owner', home.owner.id],
        ['token', issued.secret],
        ['operator token', operator.secret],
      ]);
      if (shared) {
        ctx.io.stdout.write(
          '\nEvery lake serve replica needs this environment (copy both key files to each; docs/operations.md):\n',
        );
        for (const [name, value] of Object.entries(replicaEnvironment(homeOptions)))
          ctx.io.stdout.write(`  ${name}=${value}\n`);
      }
      if (ctx.io.isStdoutTTY)
        ctx.io.stderr.write(
          'Both tokens are shown once. Keep them somewhere safe; the operator token manages organizations (lake admin org).\n',
        );
    });
}
