import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Conf from 'conf';
import { makePrivateFolder } from '../support/private-folder.js';
import { resolveConfigDir } from './paths.js';

/** The settings a profile can hold. docs and `lake config` list the same keys. */
export const PROFILE_KEYS = ['base_url', 'token', 'home', 'output', 'schema'] as const;
export type ProfileKey = (typeof PROFILE_KEYS)[number];
export type Profile = Partial<Record<ProfileKey, string>>;

interface ConfigFile {
  current_profile: string;
  profiles: Record<string, Profile>;
}

const DEFAULTS: ConfigFile = { current_profile: 'default', profiles: {} };

export function isProfileKey(value: string): value is ProfileKey {
  return (PROFILE_KEYS as readonly string[]).includes(value);
}

function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return DEFAULTS;
    throw error;
  }
  const parsed = JSON.parse(text) as Partial<ConfigFile>;
  return { current_profile: parsed.current_profile ?? DEFAULTS.current_profile, profiles: parsed.profiles ?? {} };
}

/**
 * Named profiles in <config dir>/config.json (mode 0600: a profile can hold a token). Every command reads them,
 * so reading is a plain JSON parse; conf, which costs ~70 ms to load, is loaded only to write, where its atomic
 * writes and file mode matter.
 */
export class ProfileStore {
  private data: ConfigFile;
  private writer: Conf<ConfigFile> | undefined;

  private constructor(private readonly dir: string) {
    this.data = readConfigFile(this.path);
  }

  static open(env: Record<string, string | undefined> = process.env): ProfileStore {
    return new ProfileStore(resolveConfigDir(env));
  }

  get path(): string {
    return join(this.dir, 'config.json');
  }

  currentName(): string {
    return this.data.current_profile;
  }

  profile(name: string = this.currentName()): Profile {
    return this.data.profiles[name] ?? {};
  }

  names(): string[] {
    return Object.keys(this.data.profiles).sort();
  }

  async set(name: string, key: ProfileKey, value: string): Promise<void> {
    await this.write((data) => ({
      ...data,
      profiles: { ...data.profiles, [name]: { ...data.profiles[name], [key]: value } },
    }));
  }

  async unset(name: string, key: ProfileKey): Promise<void> {
    await this.write((data) => {
      const { [key]: _removed, ...rest } = data.profiles[name] ?? {};
      return { ...data, profiles: { ...data.profiles, [name]: rest } };
    });
  }

  async use(name: string): Promise<void> {
    await this.write((data) => ({ ...data, current_profile: name }));
  }

  private async write(change: (data: ConfigFile) => ConfigFile): Promise<void> {
    if (!this.writer) {
      // Made here, not by conf: its recursive mkdir never returns under /proc (makePrivateFolder).
      makePrivateFolder(this.dir, 'LAKE_CONFIG_DIR');
      const { default: ConfClass } = await import('conf');
      this.writer = new ConfClass<ConfigFile>({
        cwd: this.dir,
        configName: 'config',
        configFileMode: 0o600,
        defaults: DEFAULTS,
      });
    }
    const next = change(readConfigFile(this.path));
    this.writer.set('current_profile', next.current_profile);
    this.writer.set('profiles', next.profiles);
    this.data = next;
  }
}
