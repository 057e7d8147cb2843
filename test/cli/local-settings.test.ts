import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { SLOW_SQL } from '../helpers/queries.js';
import { captureStreams } from '../helpers/streams.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Local mode's lake takes its settings from the CLI's own environment, the one `main` is given, parsed once with
 * the same rules as lake serve's: never from the process's, which here has none of these variables.
 */
describe('local mode settings', () => {
  const run = async (env: Record<string, string>, sql: string) => {
    const home = tempDir('lake-local-settings');
    const { io, out, err } = captureStreams(false);
    const code = await main(['node', 'lake', 'query', sql], io, {
      HOME: home,
      LAKE_CONFIG_DIR: home,
      LAKE_HOME: `${home}/lake`,
      ...env,
    });
    return { code, out: out.text, err: err.text };
  };

  it("applies the command's LAKE_QUERY_TIMEOUT_SECONDS to its local queries", async () => {
    expect(process.env.LAKE_QUERY_TIMEOUT_SECONDS).toBeUndefined();
    const started = Date.now();
    const timedOut = await run({ LAKE_QUERY_TIMEOUT_SECONDS: '1' }, SLOW_SQL);
    expect(timedOut.code).not.toBe(0);
    expect(timedOut.err).toContain('query_timeout');
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('refuses a malformed setting before opening the lake, with invalid_setting and exit 2', async () => {
    const refused = await run({ LAKE_QUERY_TIMEOUT_SECONDS: 'soon' }, 'select 1');
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('invalid_setting');
    expect(refused.err).toContain('LAKE_QUERY_TIMEOUT_SECONDS');
  });
});
