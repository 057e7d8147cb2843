import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

type Env = Record<string, string | undefined>;

/** The local lake's home: --home, else LAKE_HOME, else the XDG data directory. */
export function resolveHomeDir(flag: string | undefined, env: Env = process.env): string {
  if (flag) return resolve(flag);
  if (env.LAKE_HOME) return resolve(env.LAKE_HOME);
  const dataHome = env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return join(dataHome, 'lake');
}

/** Where profiles live: LAKE_CONFIG_DIR, else the XDG config directory. */
export function resolveConfigDir(env: Env = process.env): string {
  if (env.LAKE_CONFIG_DIR) return resolve(env.LAKE_CONFIG_DIR);
  const configHome = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(configHome, 'lake');
}
