import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { lenenc, packet, startFakeMysql, type FakeMysql } from '../helpers/fake-mysql.js';
import { tempDir } from '../helpers/temp.js';

/**
 * A MySQL server that numbers its packets wrong and sends a length no length has makes mysql2 print on its own:
 * a line per packet out of order, and a stack before it throws. A command that tests such a source in local mode
 * printed both on the person's terminal; now each is a `lake:` line, without the stack.
 */
describe('lake in local mode, when a library prints on its own', () => {
  let fake: FakeMysql;
  let env: Record<string, string>;
  beforeAll(async () => {
    fake = await startFakeMysql((socket) => {
      for (let i = 0; i < 5; i++) socket.write(packet(40 + i, Buffer.from([0x01])));
      socket.write(packet(9, Buffer.concat([lenenc('def'), Buffer.from([0xff]), Buffer.alloc(20)])));
    });
    const root = tempDir('lake-library-output');
    env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
  });
  afterAll(async () => {
    await fake?.stop();
  });

  it('says it in lines of its own on stderr, never a stack, and the command ends as it would', async () => {
    const created = await runLake(
      [
        'sources',
        'create',
        '--connector',
        'mysql',
        '--name',
        'broken',
        '--config',
        'host=127.0.0.1',
        '--config',
        `port=${fake.port}`,
        '--config',
        'database=shop',
        '--config',
        'user=anyone',
        '--no-password',
        '--json',
      ],
      { env },
    );
    expect(created.code, created.stderr).toBe(0);
    const id = (JSON.parse(created.stdout) as { id: string }).id;
    const tested = await runLake(['sources', 'test', id], { env });
    expect(tested.stdout + tested.stderr).toMatch(/unknown/);
    const lines = tested.stderr.split('\n').filter((line) => line !== '');
    expect(lines.some((line) => /^lake: a library printed: .*out of order/.test(line))).toBe(true);
    expect(lines.some((line) => /^lake: a library printed: Trace: /.test(line))).toBe(true);
    expect(tested.stderr).not.toMatch(/^\s+at /m);
    expect(
      lines.filter((line) => /Warning: got packets out of order/.test(line) && !line.startsWith('lake: ')),
    ).toEqual([]);
  });
});
