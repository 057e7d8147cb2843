import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lenenc, packet, startFakeMysql, type FakeMysql } from '../helpers/fake-mysql.js';
import { ownerApi, startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

/**
 * A MySQL "server" that lets anyone in and answers every statement out of order (packets numbered wrong) with a
 * column whose name's length has a tag no length has (0xff). mysql2 prints both on its own: `console.error` for
 * every packet out of order, `console.trace` (a stack) before it throws on the tag. In `lake serve` they went to
 * stderr as raw text and a stack trace, as often as a source's server liked; now each is one JSON log line
 * without a stack, at most 30 a minute.
 */
function protocolBreaker(): Promise<FakeMysql> {
  return startFakeMysql((socket) => {
    const column = Buffer.concat([lenenc('def'), Buffer.from([0xff]), Buffer.alloc(20)]);
    for (let i = 0; i < 5; i++) socket.write(packet(40 + i, Buffer.from([0x01])));
    socket.write(packet(9, column));
  });
}

describe('lake serve when a library prints on its own', () => {
  let server: ServeProcess;
  let fake: FakeMysql;
  let api: ReturnType<typeof ownerApi>['api'];
  beforeAll(async () => {
    fake = await protocolBreaker();
    const home = join(tempDir('lake-stray-output'), 'home');
    server = await startServeProcess({ LAKE_HOME: home });
    api = ownerApi(home, () => server).api;
  }, 30_000);
  afterAll(async () => {
    await fake?.stop();
  });

  it('logs it as JSON lines, with no stack, a bounded number a minute, and nothing on stderr', async () => {
    const created = await api('/sources', {
      method: 'POST',
      body: JSON.stringify({
        connector: 'mysql',
        name: 'broken',
        host: '127.0.0.1',
        user: 'anyone',
        config: { port: fake.port, database: 'shop' },
      }),
    });
    expect(created.object).toBe('source');
    for (let i = 0; i < 12; i++) {
      const tested = await api(`/sources/${created.id}/test`, { method: 'POST' });
      expect(tested).toMatchObject({ ok: false });
    }
    expect((await api('/version')).object).toBeDefined();
    const stopping = Date.now();
    // stop() fails the test on any stderr output or any stdout line that is not JSON.
    await server.stop();
    // mysql2's statement timer outlived a statement the server broke off: the process lingered 8.5 s after stopping.
    expect(Date.now() - stopping).toBeLessThan(3_000);
    const stray = server.logLines().filter((line) => line.msg === 'library output');
    expect(stray.length).toBeGreaterThan(0);
    expect(stray.length).toBeLessThanOrEqual(30);
    expect(stray.some((line) => line.source === 'console.trace')).toBe(true);
    expect(stray.some((line) => /out of order/.test(String(line.text)))).toBe(true);
    for (const line of stray) expect(String(line.text)).not.toMatch(/\n\s+at /);
  }, 60_000);
});
