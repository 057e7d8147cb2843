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
    const login = await runLake(['auth', 'login', '--base-url', url, '--with-token'], { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR }, input: `${token}\n` });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain('Logged in');
    expect(statSync(join(env.LAKE_CONFIG_DIR, 'config.json')).mode & 0o777).toBe(0o600);

    const whoami = await runLake(['whoami', '--json'], { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR } });
    expect(whoami.code).toBe(0);
    expect((JSON.parse(whoami.stdout) as any).credential.name).toBe('lake init');

    const shown = await runLake(['config', 'ls'], { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR } });
    expect(shown.stdout).toContain(url);
    expect(shown.stdout).not.toContain(token);
    expect(shown.stdout).toContain(`…${token.slice(-4)}`);

    const status = JSON.parse((await runLake(['auth', 'status', '--json'], { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR } })).stdout) as any;
    expect(status).toMatchObject({ mode: 'remote', base_url: url, base_url_source: 'profile', token_source: 'profile' });
    expect(JSON.stringify(status)).not.toContain(token);

    const logout = await runLake(['auth', 'logout'], { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR } });
    expect(logout.code).toBe(0);
    const after = await runLake(['whoami'], { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR } });
    expect(after.code).toBe(4);
    expect(after.stderr).toContain('authentication_required');
  });

  it('a bad token is refused at login and nothing is saved', async () => {
    const { env } = await servedHome();
    const login = await runLake(['auth', 'login', '--base-url', (server as ServeProcess).url, '--token', `pat_${'Z'.repeat(40)}`], { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR } });
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
    const badEnvToken = await runLake(['whoami'], { env: { ...configOnly, LAKE_BASE_URL: url, LAKE_TOKEN: `pat_${'Q'.repeat(40)}` } });
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
  });
});
