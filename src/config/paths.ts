import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

type Env = Record<string, string | undefined>;

/** No HOME and nothing else that says where the local lake is (a cron job, say). */
export class NoHomeDirectory extends Error {}

/**
 * The local lake's home: --home, else LAKE_HOME, else the XDG data directory. Without HOME (and XDG_DATA_HOME),
 * an error: the passwd entry's home would silently make a new, empty lake somewhere nobody looks.
 */
export function resolveHomeDir(flag: string | undefined, env: Env = process.env): string {
  if (flag) return resolve(flag);
  if (env.LAKE_HOME) return resolve(env.LAKE_HOME);
  if (!env.XDG_DATA_HOME && !env.HOME) {
    throw new NoHomeDirectory('HOME is not set, so there is no default local lake (a cron job runs without HOME).');
  }
  const dataHome = env.XDG_DATA_HOME || join(env.HOME ?? homedir(), '.local', 'share');
  return join(dataHome, 'lake');
}

/** Where profiles live: LAKE_CONFIG_DIR, else the XDG config directory. */
export function resolveConfigDir(env: Env = process.env): string {
  if (env.LAKE_CONFIG_DIR) return resolve(env.LAKE_CONFIG_DIR);
  // Without HOME, profiles are looked for where HOME would be, for this user (read-only use finds none).
  const configHome = env.XDG_CONFIG_HOME || join(env.HOME ?? homedir(), '.config');
  return join(configHome, 'lake');
}
