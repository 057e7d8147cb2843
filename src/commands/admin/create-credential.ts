import type { Command } from 'commander';
import { localAuditLog, localHomeSettings } from './open-home.js';
import { printFields, printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { usageError } from '../exit-codes.js';
import { adminApi } from './remote.js';
import type { LakeClient } from '../../client/lake-client.js';

interface CreateOptions {
  scopes: string;
  name?: string;
  user?: string;
  expiresInDays?: string;
}

function parseExpiry(days: string | undefined): number | null {
  if (days === undefined) return null;
  const n = Number(days);
  if (!Number.isInteger(n) || n < 1 || n > 3650)
    throw usageError('--expires-in-days must be a whole number from 1 to 3650.');
  return Math.floor(Date.now() / 1000) + n * 86_400;
}

/**
 * Operator commands that work on a home directly, without the API: for the person on the server machine who
 * needs the first credentials. Each prints its secret once.
 */
export function registerAdminCredentials(admin: Command, ctx: CommandContext): void {
  const create = async (kind: 'pat' | 'service_key' | 'team_key', options: CreateOptions): Promise<void> => {
    const [{ openHome }, { parseScopes }] = await Promise.all([
      import('../../service/home/home.js'),
      import('../../service/auth/scopes.js'),
    ]);
    // Team API keys carry no scopes: they read canvas tables through POST /data/table, and nothing else.
    const scopes = kind === 'team_key' ? [] : parseScopes(options.scopes);
    const expires = parseExpiry(options.expiresInDays);
    const api = await adminApi(ctx);
    if (api) return createOverApi(ctx, api, kind, options, scopes);
    const settings = await localHomeSettings(ctx);
    const home = await openHome(settings.homeDir, settings.home);
    ctx.onClose(home.close);
    let userId: string | null = null;
    if (kind === 'pat') {
      const user = options.user ? await home.directory.user(options.user) : home.owner;
      if (!user || user.organizationId !== home.organization.id)
        throw usageError(`There is no user '${options.user}' in this home.`);
      userId = user.id;
    }
    const issued = await home.credentials.issue({
      kind,
      organizationId: home.organization.id,
      userId,
      name:
        options.name ??
        (kind === 'pat' ? 'personal access token' : kind === 'team_key' ? 'team API key' : 'service key'),
      scopes,
      expires,
    });
    const record = issued.record;
    const audit = await localAuditLog(home);
    await audit.credentialCreated(record);
    if (ctx.json) {
      return printJson(ctx.io, {
        object: kind === 'pat' ? 'personal_access_token' : kind === 'team_key' ? 'team_api_key' : 'service_key',
        id: record.id,
        name: record.name,
        organization: record.organizationId,
        user: record.userId,
        scopes: record.scopes,
        created: record.created,
        expires: record.expires,
        secret: issued.secret,
      });
    }
    printFields(ctx.io, [
      ['id', record.id],
      ['name', record.name],
      ...(record.userId ? [['user', record.userId] as [string, unknown]] : []),
      ['scopes', record.scopes.join(' ')],
      ['expires', record.expires === null ? 'never' : new Date(record.expires * 1000).toISOString()],
      ['secret', issued.secret],
    ]);
    if (ctx.io.isStdoutTTY) ctx.io.stderr.write('The secret is shown once. Keep it somewhere safe.\n');
  };

  admin
    .command('pat')
    .description('personal access tokens')
    .command('create')
    .description('create a personal access token for a user of this home (default: the owner)')
    .requiredOption('--scopes <list>', 'comma-separated scopes, or all')
    .option('--name <name>', 'a name to tell the token apart')
    .option('--user <id>', 'the user (usr_…) the token acts as')
    .option('--expires-in-days <n>', 'expire after this many days')
    .action((options: CreateOptions) => create('pat', options));

  admin
    .command('service-key')
    .description('organization-owned service keys')
    .command('create')
    .description('create a service key (nsk_…) owned by the organization')
    .requiredOption('--scopes <list>', 'comma-separated scopes, or all')
    .option('--name <name>', 'a name to tell the key apart')
    .option('--expires-in-days <n>', 'expire after this many days')
    .action((options: CreateOptions) => create('service_key', options));

  admin
    .command('team-key')
    .description('legacy team API keys, for POST /data/table')
    .command('create')
    .description('create a team API key (tak_…), as the owner; it reads the tables of every canvas of the team')
    .option('--name <name>', 'a name to tell the key apart')
    .action((options: Omit<CreateOptions, 'scopes'>) => create('team_key', { ...options, scopes: '' }));
}

/**
 * The same over the API: a token for a person (`--user`, an owner's call) or for the caller, or an organization
 * key; the secret is shown once, as the API answered it.
 */
async function createOverApi(
  ctx: CommandContext,
  api: LakeClient,
  kind: 'pat' | 'service_key' | 'team_key',
  options: CreateOptions,
  scopes: readonly string[],
): Promise<void> {
  const { CREDENTIAL_ROUTES, ORGANIZATION_ROUTES } = await import('../../contract/routes.js');
  const days = options.expiresInDays === undefined ? null : Number(options.expiresInDays);
  const name =
    options.name ?? (kind === 'pat' ? 'personal access token' : kind === 'team_key' ? 'team API key' : 'service key');
  const made =
    kind === 'team_key'
      ? await api.read(CREDENTIAL_ROUTES.teamKeys.create, { body: { name, expires_in_days: days } })
      : kind === 'service_key'
        ? await api.read(CREDENTIAL_ROUTES.serviceKeys.create, {
            body: { name, scopes: [...scopes], expires_in_days: days },
          })
        : options.user
          ? await api.read(ORGANIZATION_ROUTES.createUserToken, {
              params: { id: options.user },
              body: { name, scopes: [...scopes], expires_in_days: days },
            })
          : await api.read(CREDENTIAL_ROUTES.createPersonalAccessToken, {
              body: { name, scopes: [...scopes], expires_in_days: days },
            });
  if (ctx.json) return printJson(ctx.io, made);
  printFields(ctx.io, [
    ['id', made.id],
    ['name', made.name],
    ...('scopes' in made ? [['scopes', made.scopes.join(' ')] as [string, unknown]] : []),
    ['expires', made.expires === null ? 'never' : new Date(made.expires * 1000).toISOString()],
    ['secret', made.secret],
  ]);
  if (ctx.io.isStdoutTTY) ctx.io.stderr.write('The secret is shown once. Keep it somewhere safe.\n');
}
