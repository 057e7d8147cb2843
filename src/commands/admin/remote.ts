import type { LakeClient } from '../../client/lake-client.js';
import type { CommandContext } from '../context.js';

/**
 * `lake admin` works over the API when a base URL is set (--base-url, LAKE_BASE_URL or a profile), with the token
 * given there, as every other command does; without one it works on the home itself, as the operator on the
 * server machine bootstrapping it. Undefined means the home.
 */
export async function adminApi(ctx: CommandContext): Promise<LakeClient | undefined> {
  const settings = await ctx.settings();
  return settings.baseUrl.value ? ctx.client() : undefined;
}
