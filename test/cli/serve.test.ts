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
