import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NoHomeDirectory, resolveConfigDir, resolveHomeDir } from '../../src/config/paths.js';
import { ConflictingSettings, resolveConnectionSettings } from '../../src/config/settings.js';

describe('settings resolution', () => {
  it('home: --home, then LAKE_HOME, then XDG_DATA_HOME/lake, then $HOME/.local/share/lake, else an error', () => {
    expect(resolveHomeDir('/flag', { LAKE_HOME: '/env', XDG_DATA_HOME: '/xdg' })).toBe('/flag');
    expect(resolveHomeDir(undefined, { LAKE_HOME: '/env', XDG_DATA_HOME: '/xdg' })).toBe('/env');
    expect(resolveHomeDir(undefined, { XDG_DATA_HOME: '/xdg' })).toBe('/xdg/lake');
    expect(resolveHomeDir(undefined, { HOME: '/h' })).toBe('/h/.local/share/lake');
    // A cron job without HOME must not silently get a new lake in the passwd entry's home.
    expect(() => resolveHomeDir(undefined, {})).toThrow(NoHomeDirectory);
  });

  it('config dir: LAKE_CONFIG_DIR, then XDG_CONFIG_HOME/lake, then ~/.config/lake', () => {
    expect(resolveConfigDir({ LAKE_CONFIG_DIR: '/c', XDG_CONFIG_HOME: '/x' })).toBe('/c');
    expect(resolveConfigDir({ XDG_CONFIG_HOME: '/x' })).toBe('/x/lake');
    expect(resolveConfigDir({ HOME: '/h' })).toBe('/h/.config/lake');
    expect(resolveConfigDir({})).toBe(join(homedir(), '.config', 'lake'));
  });

  it('the first of flag, environment and profile that names a lake decides where the command goes', () => {
    const profile = { base_url: 'http://profile', token: 'pat_profile' };
    const env = { HOME: '/h', LAKE_BASE_URL: 'http://env', LAKE_TOKEN: 'pat_env' };
    expect(resolveConnectionSettings({ flags: { baseUrl: 'http://flag' }, env, profile })).toMatchObject({
      baseUrl: { value: 'http://flag', source: 'flag' },
      token: { value: 'pat_env', source: 'env' },
      homeDir: { value: undefined, source: 'default' },
    });
    // --home is the local lake there even when the environment and the profile name services.
    expect(resolveConnectionSettings({ flags: { home: '/other' }, env, profile })).toMatchObject({
      baseUrl: { value: undefined, source: 'default' },
      homeDir: { value: '/other', source: 'flag' },
    });
    // LAKE_HOME beats a profile's base_url.
    expect(resolveConnectionSettings({ flags: {}, env: { HOME: '/h', LAKE_HOME: '/envhome' }, profile })).toMatchObject(
      {
        baseUrl: { value: undefined, source: 'default' },
        homeDir: { value: '/envhome', source: 'env' },
        token: { value: 'pat_profile', source: 'profile' },
      },
    );
    expect(resolveConnectionSettings({ flags: {}, env: { HOME: '/h' }, profile: {} })).toMatchObject({
      baseUrl: { value: undefined, source: 'default' },
      homeDir: { value: '/h/.local/share/lake', source: 'default' },
    });
  });

  it('naming a local lake and a service at one level is refused', () => {
    expect(() =>
      resolveConnectionSettings({ flags: { home: '/a', baseUrl: 'http://b' }, env: {}, profile: {} }),
    ).toThrow(ConflictingSettings);
    expect(() =>
      resolveConnectionSettings({ flags: {}, env: { LAKE_HOME: '/a', LAKE_BASE_URL: 'http://b' }, profile: {} }),
    ).toThrow(ConflictingSettings);
    expect(() =>
      resolveConnectionSettings({ flags: {}, env: {}, profile: { home: '/a', base_url: 'http://b' } }),
    ).toThrow(ConflictingSettings);
    // A higher level that decides makes the lower conflict irrelevant.
    expect(
      resolveConnectionSettings({
        flags: { home: '/x' },
        env: { LAKE_HOME: '/a', LAKE_BASE_URL: 'http://b' },
        profile: {},
      }).homeDir.value,
    ).toBe('/x');
  });
});
