import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { startServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

describe('the CLI under a rate limit', () => {
  it('waits out Retry-After by itself, says so on stderr, and then succeeds', async () => {
    const home = join(tempDir('lake-ratelimit'), 'home');
    // 12 a minute: one request comes back every 5 s once the burst is spent, longer than the CLI takes to start on a
    // loaded machine (at 60 a minute a CLI that took over a second to start found its request already back, no 429).
    const server = await startServeProcess({ LAKE_HOME: home, LAKE_RATE_LIMIT_PER_CALLER: '12' });
    try {
      const token = readFileSync(join(home, 'owner.token'), 'utf8').trim();
      const headers = { Authorization: `Bearer ${token}` };
      let status = 200;
      for (let i = 0; i < 200 && status === 200; i++)
        status = (await fetch(`${server.url}/whoami`, { headers })).status;
      expect(status).toBe(429);

      const started = Date.now();
      const result = await runLake(['whoami', '--json'], {
        env: { LAKE_BASE_URL: server.url, LAKE_TOKEN: token, LAKE_CONFIG_DIR: tempDir('lake-ratelimit-config') },
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/rate limited by the service \(HTTP 429\); retrying in [1-5]\.0 s/);
      expect(JSON.parse(result.stdout)).toMatchObject({ organization: expect.anything() });
      // It waited the seconds the server asked for, and did not retry in a tight loop.
      const asked = Number(/retrying in (\d)\.0 s/.exec(result.stderr)?.[1]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(asked * 1000 - 100);
      // One 429 from the loop above, one (at most two) for the CLI's first attempt.
      const refused = server.logLines().filter((l) => l.msg === 'request' && l.status === 429).length;
      expect(refused).toBeGreaterThanOrEqual(2);
      expect(refused).toBeLessThanOrEqual(3);
    } finally {
      await server.stop();
    }
  });
});
