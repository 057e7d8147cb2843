import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { startServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

describe('lake serve', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('shuts down gracefully on %s and exits 0', async (signal) => {
    const home = join(tempDir('lake-serve'), 'home');
    const server = await startServeProcess({ LAKE_HOME: home });
    const response = await fetch(`${server.url}/version`);
    expect(response.status).toBe(200);
    const code = await server.stop(signal);
    expect(code).toBe(0);
    const messages = server.logLines().map((l) => l.msg);
    expect(messages).toEqual(['listening', 'request', 'shutting down', 'stopped']);
  });

  it('never logs query strings, which can hold signatures', async () => {
    const home = join(tempDir('lake-serve'), 'home');
    const server = await startServeProcess({ LAKE_HOME: home });
    await (await fetch(`${server.url}/version?signature=s3cr3t&token=pat_abc`)).arrayBuffer();
    await server.stop();
    const log = JSON.stringify(server.logLines());
    expect(log).toContain('"path":"/version"');
    expect(log).not.toContain('s3cr3t');
  });

  it('refuses to start on a shared PostgreSQL store without its key files, as a setting to fix (exit 2)', async () => {
    const home = join(tempDir('lake-serve'), 'home');
    // Nothing listens at port 1: the settings are refused before any connection is tried.
    const url = 'postgres://lake@127.0.0.1:1/none';
    const missing = await runLake(['serve', '--port', '0'], { env: { LAKE_HOME: home, LAKE_METADATA_URL: url } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('invalid_setting');
    expect(missing.stderr).toContain('set LAKE_SIGNING_KEY_FILE to a key file every replica reads');
    expect(missing.stderr).not.toContain('bug in lake');
    const absent = await runLake(['serve', '--port', '0'], {
      env: {
        LAKE_HOME: home,
        LAKE_METADATA_URL: url,
        LAKE_SIGNING_KEY_FILE: join(home, 'nope.key'),
        LAKE_SECRETS_KEY_FILE: join(home, 'nope.key'),
      },
    });
    expect(absent.code).toBe(2);
    expect(absent.stderr).toContain('LAKE_SIGNING_KEY_FILE names');
  });

  it('takes browser origins from LAKE_CORS_ORIGINS, and refuses a malformed one at start (exit 2)', async () => {
    const home = join(tempDir('lake-serve'), 'home');
    const refused = await runLake(['serve', '--port', '0'], {
      env: { LAKE_HOME: home, LAKE_CORS_ORIGINS: 'http://localhost:5173,*' },
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('invalid_setting');
    expect(refused.stderr).toContain("'*' is not an origin");

    const server = await startServeProcess({ LAKE_HOME: home, LAKE_CORS_ORIGINS: 'http://localhost:5173' });
    try {
      const preflight = await fetch(`${server.url}/queries`, {
        method: 'OPTIONS',
        headers: { Origin: 'http://localhost:5173', 'Access-Control-Request-Method': 'POST' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    } finally {
      await server.stop();
    }
  });
});
