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

/** Said by `lake auth status` and README: how a command decides where it goes. */
export const PRECEDENCE_RULE =
  "Where a command goes: flag > environment > profile. The first of these that names a lake decides: --home/LAKE_HOME/profile home means the local lake there, --base-url/LAKE_BASE_URL/profile base_url means that service; naming both at one level is a usage error. A token follows the same order; in local mode only a --token flag or LAKE_TOKEN replaces the home's own.";

/** Two destinations named at the same level: the command cannot know which lake was meant. */
export class ConflictingSettings extends Error {}

/**
 * Flag beats environment, environment beats profile: the order every setting follows. Where the command goes is
 * decided by the first level that names a lake at all, so `--home` always means that local lake even when the
 * profile names a service, and LAKE_BASE_URL beats a profile's home.
 */
export function resolveConnectionSettings({ flags, env, profile }: SettingInputs): ConnectionSettings {
  const levels: [SettingSource, string | undefined, string | undefined][] = [
    ['flag', flags.home, flags.baseUrl],
    ['env', env.LAKE_HOME, env.LAKE_BASE_URL],
    ['profile', profile.home, profile.base_url],
  ];
  const deciding = levels.find(([, home, baseUrl]) => home || baseUrl);
  if (deciding?.[1] && deciding[2]) {
    const [source] = deciding;
    const names =
      source === 'flag'
        ? '--home and --base-url'
        : source === 'env'
          ? 'LAKE_HOME and LAKE_BASE_URL'
          : "the profile's home and base_url";
    throw new ConflictingSettings(`${names} both say where to go: one names a local lake, the other a service.`);
  }
  const remote = deciding?.[2] !== undefined && deciding[2] !== '';
  return {
    baseUrl: remote
      ? { value: deciding?.[2], source: deciding?.[0] as SettingSource }
      : { value: undefined, source: 'default' },
    token: pick(flags.token, env.LAKE_TOKEN, profile.token),
    homeDir: {
      value: remote ? undefined : resolveHomeDir(deciding?.[1], { ...env, LAKE_HOME: undefined }),
      source: deciding && !remote ? deciding[0] : 'default',
    },
  };
}
