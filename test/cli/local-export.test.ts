import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** Local mode's lake serves only its own process: a large result is never held back by rate limits on its pages. */
describe('a large result in local mode', () => {
  it('streams 180,000 rows to a pipe with no rate limit and no retry noise, even with the serve limits set', async () => {
    const home = tempDir('lake-local-export');
    const started = Date.now();
    // 180 pages of 1,000 rows: past the 120 requests a minute lake serve allows a caller.
    const result = await runLake(['query', 'select range as i from range(180000)', '--output', 'csv'], {
      env: { LAKE_HOME: home, LAKE_RATE_LIMIT_PER_CALLER: '60' },
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('rate limited');
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(180_001);
    expect(lines[180_000]).toBe('179999');
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 90_000);
});
