import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfigDir, resolveHomeDir } from '../../src/config/paths.js';
import { resolveConnectionSettings } from '../../src/config/settings.js';

describe('settings resolution', () => {
  it('home: --home, then LAKE_HOME, then XDG_DATA_HOME/lake, then ~/.local/share/lake', () => {
    expect(resolveHomeDir('/flag', { LAKE_HOME: '/env', XDG_DATA_HOME: '/xdg' })).toBe('/flag');
    expect(resolveHomeDir(undefined, { LAKE_HOME: '/env', XDG_DATA_HOME: '/xdg' })).toBe('/env');
    expect(resolveHomeDir(undefined, { XDG_DATA_HOME: '/xdg' })).toBe('/xdg/lake');
    expect(resolveHomeDir(undefined, {})).toBe(join(homedir(), '.local', 'share', 'lake'));
  });

  it('config dir: LAKE_CONFIG_DIR, then XDG_CONFIG_HOME/lake, then ~/.config/lake', () => {
    expect(resolveConfigDir({ LAKE_CONFIG_DIR: '/c', XDG_CONFIG_HOME: '/x' })).toBe('/c');
    expect(resolveConfigDir({ XDG_CONFIG_HOME: '/x' })).toBe('/x/lake');
    expect(resolveConfigDir({})).toBe(join(homedir(), '.config', 'lake'));
  });

  it('flag beats env beats profile, and says where each value came from', () => {
    const profile = { base_url: 'http://profile', token: 'pat_profile', home: '/profile-home' };
    const env = { LAKE_BASE_URL: 'http://env', LAKE_TOKEN: 'pat_env' };
    expect(resolveConnectionSettings({ flags: { baseUrl: 'http://flag' }, env, profile })).toMatchObject({
      baseUrl: { value: 'http://flag', source: 'flag' },
      token: { value: 'pat_env', source: 'env' },
      homeDir: { value: '/profile-home', source: 'profile' },
    });
    expect(resolveConnectionSettings({ flags: {}, env: {}, profile: {} }).baseUrl).toEqual({ value: undefined, source: 'default' });
  });
});
