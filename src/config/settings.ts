import { resolveHomeDir } from './paths.js';
import type { Profile } from './profiles.js';

export type SettingSource = 'flag' | 'env' | 'profile' | 'default';

export interface ResolvedSetting {
  value: string | undefined;
  source: SettingSource;
}

export interface ConnectionSettings {
  /** Set for remote mode; absent means the embedded local lake. */
  baseUrl: ResolvedSetting;
  token: ResolvedSetting;
  homeDir: ResolvedSetting;
}

export interface SettingInputs {
  flags: { baseUrl?: string | undefined; token?: string | undefined; home?: string | undefined };
  env: Record<string, string | undefined>;
  profile: Profile;
}

function pick(flag: string | undefined, env: string | undefined, profile: string | undefined): ResolvedSetting {
  if (flag) return { value: flag, source: 'flag' };
  if (env) return { value: env, source: 'env' };
  if (profile) return { value: profile, source: 'profile' };
  return { value: undefined, source: 'default' };
}

/** Flag beats environment, environment beats profile: the order every setting follows. */
export function resolveConnectionSettings({ flags, env, profile }: SettingInputs): ConnectionSettings {
  const home = pick(flags.home, env.LAKE_HOME, profile.home);
  return {
    baseUrl: pick(flags.baseUrl, env.LAKE_BASE_URL, profile.base_url),
    token: pick(flags.token, env.LAKE_TOKEN, profile.token),
    homeDir: { value: resolveHomeDir(home.value, { ...env, LAKE_HOME: undefined }), source: home.source },
  };
}
