import { resolveHomeDir } from '../../config/paths.js';
import type { Home } from '../../service/home/home.js';
import type { LakeServices } from '../../service/assembly/services.js';
import type { CommandContext } from '../context.js';

/** Admin commands work on the home directly, as the operator on the server machine, without the API. */
export async function openAdminHome(ctx: CommandContext): Promise<{ home: Home; services: LakeServices }> {
  const [{ openHome, homeOptionsFromEnv }, { createServices }] = await Promise.all([
    import('../../service/home/home.js'),
    import('../../service/assembly/services.js'),
  ]);
  const home = await openHome(resolveHomeDir(ctx.globals.home, ctx.env), homeOptionsFromEnv(ctx.env));
  ctx.onClose(home.close);
  const services = await createServices(home);
  ctx.onClose(() => services.close());
  return { home, services };
}
