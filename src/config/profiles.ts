import type Conf from 'conf';
import { resolveConfigDir } from './paths.js';

/** The settings a profile can hold. docs and `lake config` list the same keys. */
export const PROFILE_KEYS = ['base_url', 'token', 'home', 'output'] as const;
export type ProfileKey = (typeof PROFILE_KEYS)[number];
export type Profile = Partial<Record<ProfileKey, string>>;

interface ConfigFile {
  current_profile: string;
  profiles: Record<string, Profile>;
}

export function isProfileKey(value: string): value is ProfileKey {
  return (PROFILE_KEYS as readonly string[]).includes(value);
}

/**
 * Named profiles in <config dir>/config.json, written atomically with mode 0600 because a profile can hold a
 * token. conf is loaded only by commands that read profiles.
 */
export class ProfileStore {
  private constructor(private readonly conf: Conf<ConfigFile>) {}

  static async open(env: Record<string, string | undefined> = process.env): Promise<ProfileStore> {
    const { default: ConfClass } = await import('conf');
    const conf = new ConfClass<ConfigFile>({
      cwd: resolveConfigDir(env),
      configName: 'config',
      configFileMode: 0o600,
      defaults: { current_profile: 'default', profiles: {} },
    });
    return new ProfileStore(conf);
  }

  get path(): string {
    return this.conf.path;
  }

  currentName(): string {
    return this.conf.get('current_profile');
  }

  profile(name: string = this.currentName()): Profile {
    return this.conf.get('profiles')[name] ?? {};
  }

  names(): string[] {
    return Object.keys(this.conf.get('profiles')).sort();
  }

  set(name: string, key: ProfileKey, value: string): void {
    const profiles = this.conf.get('profiles');
    this.conf.set('profiles', { ...profiles, [name]: { ...profiles[name], [key]: value } });
  }

  unset(name: string, key: ProfileKey): void {
    const profiles = this.conf.get('profiles');
    const { [key]: _removed, ...rest } = profiles[name] ?? {};
    this.conf.set('profiles', { ...profiles, [name]: rest });
  }

  use(name: string): void {
    this.conf.set('current_profile', name);
  }
}
