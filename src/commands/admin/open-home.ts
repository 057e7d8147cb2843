import { resolveHomeDir } from '../../config/paths.js';
import type { Home } from '../../service/home/home.js';
import type { LakeServices } from '../../service/assembly/services.js';
import type { ServerSettings } from '../../service/server/settings.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';

/**
 * The settings a command that works on the home itself runs with (the CLI's environment, or one it is given): a
 * setting that does not parse is a usage error naming it.
 */
export async function localHomeSettings(
  ctx: CommandContext,
  env: Record<string, string | undefined> = ctx.env,
): Promise<ServerSettings> {
  const { parseServerSettings, InvalidSetting } = await import('../../service/server/settings.js');
  try {
    return parseServerSettings(env, 'local', { homeDir: resolveHomeDir(ctx.globals.home, ctx.env) });
  } catch (error) {
    if (!(error instanceof InvalidSetting)) throw error;
    throw new CliError('invalid_setting', error.message, EXIT.usage, 'Fix the setting and run the command again.');
  }
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
