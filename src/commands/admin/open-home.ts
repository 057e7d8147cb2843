import { resolveHomeDir } from '../../config/paths.js';
import type { Home } from '../../service/home/home.js';
import type { LakeServices } from '../../service/assembly/services.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';

/** Admin commands work on the home directly, as the operator on the server machine, without the API. */
export async function openAdminHome(ctx: CommandContext): Promise<{ home: Home; services: LakeServices }> {
  const [{ openHome }, { createServices }, { parseServerSettings, serviceOptions, InvalidSetting }] = await Promise.all(
    [
      import('../../service/home/home.js'),
      import('../../service/assembly/services.js'),
      import('../../service/server/settings.js'),
    ],
  );
  let settings: ReturnType<typeof parseServerSettings>;
  try {
    settings = parseServerSettings(ctx.env, 'local', { homeDir: resolveHomeDir(ctx.globals.home, ctx.env) });
  } catch (error) {
    if (!(error instanceof InvalidSetting)) throw error;
    throw new CliError('invalid_setting', error.message, EXIT.usage, 'Fix the setting and run the command again.');
  }
  const home = await openHome(settings.homeDir, settings.home);
  ctx.onClose(home.close);
  const services = await createServices(home, serviceOptions(settings));
  ctx.onClose(() => services.close());
  return { home, services };
}
