import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

function isolatedEnv(): Record<string, string> {
  const root = tempDir('lake-cli');
  return { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
}

let server: ServeProcess | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe('lake whoami', () => {
  it('works on a new machine with no configuration: local lake, owner credential', async () => {
    const env = isolatedEnv();
    const result = await runLake(['whoami'], { env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    // In a pipe: stable label<TAB>value lines, no colour.
    expect(result.stdout).toMatch(/^organization\tLocal lake \(org_[0-9a-z]+\)\nprincipal\tuser\nuser\tOwner \(usr_/);
    expect(result.stdout).not.toContain('\x1b[');
  });

  it('--json prints the API object, before or after the command name', async () => {
    const env = isolatedEnv();
    for (const args of [
      ['whoami', '--json'],
      ['--json', 'whoami'],
    ]) {
      const result = await runLake(args, { env });
      expect(result.code).toBe(0);
      const body = JSON.parse(result.stdout) as Record<string, any>;
      expect(body.object).toBe('whoami');
      expect(body.user.role).toBe('owner');
    }
  });

  it('talks to `lake serve` with --base-url and --token, and exits 4 with code and request id for a wrong token', async () => {
    const env = isolatedEnv();
    const init = await runLake(['init', '--json'], { env });
    expect(init.code).toBe(0);
    const { token, organization } = JSON.parse(init.stdout) as {
      token: { secret: string };
      organization: { id: string };
    };
    server = await startServeProcess(env);

    const ok = await runLake(['--base-url', server.url, '--token', token.secret, 'whoami', '--json'], {
      env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR },
    });
    expect(ok.code).toBe(0);
    expect((JSON.parse(ok.stdout) as any).organization.id).toBe(organization.id);

    const wrong = `pat_${'B'.repeat(40)}`;
    const bad = await runLake(['--base-url', server.url, '--token', wrong, 'whoami'], {
      env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR },
    });
    expect(bad.code).toBe(4);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain('invalid_credentials');
    const requestId = /request id: (req_[0-9a-f]+)/.exec(bad.stderr)?.[1];
    expect(requestId).toBeDefined();
    expect(bad.stderr).toContain('hint:');
    expect(bad.stderr).not.toContain(wrong);

    const badJson = await runLake(['--base-url', server.url, '--token', wrong, 'whoami', '--json'], {
      env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR },
    });
    expect(badJson.code).toBe(4);
    expect((JSON.parse(badJson.stderr) as any).error).toMatchObject({
      code: 'invalid_credentials',
      request_id: expect.stringMatching(/^req_/),
    });

    // The server logged each request as one structured line, and never the secret.
    const logs = server.logLines().filter((l) => l.msg === 'request');
    expect(
      logs.some((l) => l.request_id === requestId && l.status === 401 && l.path === '/whoami' && l.method === 'GET'),
    ).toBe(true);
    expect(JSON.stringify(server.logLines())).not.toContain(token.secret);
    expect(JSON.stringify(server.logLines())).not.toContain(wrong);
  });

  it('exits 5 when the service cannot be reached, after retrying', async () => {
    const env = isolatedEnv();
    const result = await runLake(['--base-url', 'http://127.0.0.1:9', '--token', `pat_${'C'.repeat(40)}`, 'whoami'], {
      env,
    });
    expect(result.code).toBe(5);
    expect(result.stderr).toContain('connection_failed');
    expect(result.stderr).toContain('retrying');
  });

  it('exits 2 on usage errors: unknown command, unknown option, bad base URL', async () => {
    const env = isolatedEnv();
    expect((await runLake(['nope'], { env })).code).toBe(2);
    expect((await runLake(['whoami', '--bogus'], { env })).code).toBe(2);
    const badUrl = await runLake(['--base-url', 'ftp://x', 'whoami'], { env });
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('invalid_base_url');
  });

  it('--help and --version exit 0', async () => {
    const help = await runLake(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('whoami');
    const version = await runLake(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
