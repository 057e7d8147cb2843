import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { captureStreams } from '../helpers/streams.js';
import { tempDir } from '../helpers/temp.js';
import { overHttp, type Harness } from '../helpers/transports.js';

/** `lake query` against lake serve long-polls, as local mode does: one held request, no sleeping between polls. */
describe('lake query against a remote service', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await overHttp.start();
  });
  afterAll(async () => {
    await api?.close();
  });

  const query = async (sql: string): Promise<{ exit: number; out: string; polls: number; ms: number }> => {
    const before = api.logs.length;
    const { io, out } = captureStreams(false);
    const home = tempDir('lake-remote-query');
    const started = Date.now();
    const exit = await main(
      ['node', 'lake', '--base-url', api.baseUrl, '--token', api.home.ownerToken, 'query', sql, '--output', 'csv'],
      io,
      { HOME: home, LAKE_CONFIG_DIR: home },
    );
    const polls = (api.logs.slice(before) as { method?: string; path?: string }[]).filter(
      (l) => l.method === 'GET' && /^\/queries\/qr_/.test(l.path ?? ''),
    ).length;
    return { exit, out: out.text, polls, ms: Date.now() - started };
  };

  it('waits for a query that takes a while with one held request, and answers as soon as it is done', async () => {
    // A few hundred milliseconds of work: the old client polled, slept a second, and polled again.
    const slow = await query('select count(*) as n from range(150000000) t(i) where i % 7 = 0');
    expect(slow.exit).toBe(0);
    expect(slow.out).toContain('21428572');
    expect(slow.polls).toBe(1);
    const quick = await query('select 42 as answer');
    expect(quick.exit).toBe(0);
    expect(quick.polls).toBe(1);
    expect(quick.ms).toBeLessThan(1000);
  });
});
