import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

let server: ServeProcess | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function servedHome(): Promise<{ env: Record<string, string>; token: string }> {
  const root = tempDir('lake-config');
  const env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
  const init = JSON.parse((await runLake(['init', '--json'], { env })).stdout) as { token: { secret: string } };
  server = await startServeProcess({ LAKE_HOME: env.LAKE_HOME });
  return { env, token: init.token.secret };
}

const DEAD = 'http://127.0.0.1:9';

describe('profiles and precedence', () => {
  it('auth login checks the token, saves the profile with mode 0600, and later commands use it', async () => {
    const { env, token } = await servedHome();
    const url = (server as ServeProcess).url;
    const login = await runLake(['auth', 'login', '--base-url', url, '--with-token'], {
      env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR },
      input: `${token}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain('Logged in');
    expect(statSync(join(env.LAKE_CONFIG_DIR as string, 'config.json')).mode & 0o777).toBe(0o600);

    const whoami = await runLake(['whoami', '--json'], { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR } });
    expect(whoami.code).toBe(0);
    expect((JSON.parse(whoami.stdout) as any).credential.name).toBe('lake init');

    const shown = await runLake(['config', 'ls'], { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR } });
    expect(shown.stdout).toContain(url);
    expect(shown.stdout).not.toContain(token);
    expect(shown.stdout).toContain(`…${token.slice(-4)}`);

    const status = JSON.parse(
      (await runLake(['auth', 'status', '--json'], { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR } })).stdout,
    ) as any;
    expect(status).toMatchObject({
      mode: 'remote',
      base_url: url,
      base_url_source: 'profile',
      token_source: 'profile',
    });
    expect(JSON.stringify(status)).not.toContain(token);

    const logout = await runLake(['auth', 'logout'], { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR } });
    expect(logout.code).toBe(0);
    const after = await runLake(['whoami'], { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR } });
    expect(after.code).toBe(4);
    expect(after.stderr).toContain('authentication_required');
  });

  it('auth login --profile NAME makes that profile, and logs in again to its own service without --base-url', async () => {
    const { env, token } = await servedHome();
    const url = (server as ServeProcess).url;
    const config = { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR };
    const first = await runLake(['auth', 'login', '--base-url', url, '--with-token', '--profile', 'remote'], {
      env: config,
      input: `${token}\n`,
    });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain("saved in profile 'remote'");
    const again = await runLake(['auth', 'login', '--with-token', '--profile', 'remote'], {
      env: config,
      input: `${token}\n`,
    });
    expect(again.code, again.stderr).toBe(0);
    const whoami = await runLake(['--profile', 'remote', 'whoami', '--json'], { env: config });
    expect(whoami.code, whoami.stderr).toBe(0);
    // A profile that does not exist is still refused everywhere else.
    const other = await runLake(['--profile', 'nowhere', 'whoami'], { env: config });
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('profile_not_found');
  });

  it('a bad token is refused at login and nothing is saved', async () => {
    const { env } = await servedHome();
    const login = await runLake(
      ['auth', 'login', '--base-url', (server as ServeProcess).url, '--token', `pat_${'Z'.repeat(40)}`],
      { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR } },
    );
    expect(login.code).toBe(4);
    const get = await runLake(['config', 'get', 'base_url'], { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR } });
    expect(get.stdout).toBe('');
  });

  it('the environment beats the profile, and a flag beats the environment', async () => {
    const { env, token } = await servedHome();
    const url = (server as ServeProcess).url;
    const configOnly = { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR };
    expect((await runLake(['config', 'set', 'base_url', DEAD], { env: configOnly })).code).toBe(0);
    expect((await runLake(['config', 'set', 'token', token], { env: configOnly })).code).toBe(0);

    // profile says DEAD, env says the live server: env wins.
    const viaEnv = await runLake(['whoami', '--json'], { env: { ...configOnly, LAKE_BASE_URL: url } });
    expect(viaEnv.code).toBe(0);
    // env says live, flag says DEAD: the flag wins.
    const viaFlag = await runLake(['--base-url', DEAD, 'whoami'], { env: { ...configOnly, LAKE_BASE_URL: url } });
    expect(viaFlag.code).toBe(5);
    // token: env beats profile.
    const badEnvToken = await runLake(['whoami'], {
      env: { ...configOnly, LAKE_BASE_URL: url, LAKE_TOKEN: `pat_${'Q'.repeat(40)}` },
    });
    expect(badEnvToken.code).toBe(4);
  });

  it('named profiles: --profile selects one, config use switches the current one, unknown ones are usage errors', async () => {
    const { env, token } = await servedHome();
    const url = (server as ServeProcess).url;
    const configOnly = { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR };
    await runLake(['--profile', 'prod', 'config', 'set', 'base_url', url], { env: configOnly });
    await runLake(['--profile', 'prod', 'config', 'set', 'token', token], { env: configOnly });
    expect((await runLake(['--profile', 'prod', 'whoami'], { env: configOnly })).code).toBe(0);
    expect((await runLake(['--profile', 'staging', 'whoami'], { env: configOnly })).code).toBe(2);
    expect((await runLake(['config', 'use', 'prod'], { env: configOnly })).code).toBe(0);
    expect((await runLake(['whoami'], { env: configOnly })).code).toBe(0);
    expect((await runLake(['config', 'set', 'colour', 'x'], { env: configOnly })).code).toBe(2);
    // Using a profile that does not exist is a usage error, and makes none (it made and selected an empty one).
    const nope = await runLake(['config', 'use', 'nope2'], { env: configOnly });
    expect(nope.code).toBe(2);
    expect(nope.stderr).toContain("There is no profile 'nope2'");
    expect((await runLake(['config', 'ls'], { env: configOnly })).stdout).not.toContain('nope2');
    expect((await runLake(['whoami'], { env: configOnly })).code).toBe(0);
  });

  it('--home means that local lake even when the profile names a service; naming both at one level is a usage error; auth status says the rule', async () => {
    const { env, token } = await servedHome();
    const url = (server as ServeProcess).url;
    const configOnly = { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR };
    await runLake(['config', 'set', 'base_url', url], { env: configOnly });
    await runLake(['config', 'set', 'token', token], { env: configOnly });
    const other = join(tempDir('lake-other-home'), 'home');
    const local = await runLake(['--home', other, 'auth', 'status', '--json'], { env: configOnly });
    expect(local.code, local.stderr).toBe(0);
    const status = JSON.parse(local.stdout) as Record<string, any>;
    expect(status).toMatchObject({ mode: 'local', home: other, home_source: 'flag', base_url: null });
    expect(status.precedence).toMatch(/flag > environment > profile/);
    // LAKE_HOME beats the profile's base_url too.
    expect(
      JSON.parse((await runLake(['auth', 'status', '--json'], { env: { ...configOnly, LAKE_HOME: other } })).stdout),
    ).toMatchObject({ mode: 'local', home_source: 'env' });
    const both = await runLake(['--home', other, '--base-url', url, 'whoami'], { env: configOnly });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('conflicting_settings');
    const bothEnv = await runLake(['whoami'], { env: { ...configOnly, LAKE_HOME: other, LAKE_BASE_URL: url } });
    expect(bothEnv.code).toBe(2);
    const plain = await runLake(['auth', 'status'], { env: configOnly });
    expect(plain.stdout).toContain('flag > environment > profile');
  });

  it('without HOME (a cron job), the default lake is not made up: a usage error says to name one', async () => {
    const cron = await runLake(['query', 'select 42'], { unsetHome: true });
    expect(cron.code).toBe(2);
    expect(cron.stderr).toContain('no_home');
    expect(cron.stderr).toMatch(/--home|LAKE_HOME/);
    const named = await runLake(['query', 'select 42'], {
      unsetHome: true,
      env: { LAKE_HOME: join(tempDir('lake-cron'), 'home') },
    });
    expect(named.code, named.stderr).toBe(0);
  });

  it('lake serve on a port in use says so, instead of an unexpected error', async () => {
    const { env } = await servedHome();
    const port = new URL((server as ServeProcess).url).port;
    const busy = await runLake(['serve', '--port', port], {
      env: { LAKE_HOME: join(tempDir('lake-busy'), 'home') },
      timeoutMs: 15_000,
    });
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain('address_unavailable');
    expect(busy.stderr).toContain('already in use');
    expect(busy.stderr).not.toContain('unexpected_error');
    void env;
  });
});
