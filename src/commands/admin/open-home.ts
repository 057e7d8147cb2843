import { resolveHomeDir } from '../../config/paths.js';
import type { AuditLog } from '../../service/auth/audit-log.js';
import type { Home } from '../../service/home/home.js';
import type { LakeServices } from '../../service/assembly/services.js';
import type { ServerSettings } from '../../service/server/settings.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';

/**
 * The settings a command that works on the home itself runs with, from the CLI's environment: a setting that does
 * not parse is a usage error naming it.
 */
export async function localHomeSettings(ctx: CommandContext): Promise<ServerSettings> {
  const { parseServerSettings, InvalidSetting } = await import('../../service/server/settings.js');
  try {
    return parseServerSettings(ctx.env, 'local', { homeDir: resolveHomeDir(ctx.globals.home, ctx.env) });
  } catch (error) {
    if (!(error instanceof InvalidSetting)) throw error;
    throw new CliError('invalid_setting', error.message, EXIT.usage, 'Fix the setting and run the command again.');
  }
}

/** The audit log of a home opened without its services (`lake init`, the credential commands): `lake admin` writes. */
export async function localAuditLog(home: Home): Promise<AuditLog> {
  const [{ AuditLog }, { AuditStore }, { REAL_CLOCK }] = await Promise.all([
    import('../../service/auth/audit-log.js'),
    import('../../service/auth/audit-store.js'),
    import('../../service/core/clock.js'),
  ]);
  return new AuditLog(new AuditStore(home.db), home.directory, REAL_CLOCK);
}

/** Admin commands work on the home directly, as the operator on the server machine, without the API. */
export async function openAdminHome(ctx: CommandContext): Promise<{ home: Home; services: LakeServices }> {
  const [{ openHome }, { createServices }, { serviceOptions }] = await Promise.all([
    import('../../service/home/home.js'),
    import('../../service/assembly/services.js'),
    import('../../service/server/settings.js'),
  ]);
  const settings = await localHomeSettings(ctx);
  const home = await openHome(settings.homeDir, settings.home);
  ctx.onClose(home.close);
  const services = await createServices(home, serviceOptions(settings));
  ctx.onClose(() => services.close());
  return { home, services };
}
