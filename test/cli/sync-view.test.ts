import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { IOStreams } from '../../src/render/iostreams.js';
import { Capture } from '../helpers/streams.js';
import { runLake } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** A terminal of a given size, as `script` or a CI runner reports one. */
class SizedTerminal extends Capture {
  constructor(
    readonly columns: number,
    readonly rows: number,
  ) {
    super(true);
  }
}

describe('lake sync start --follow on a terminal', () => {
  it('a terminal that reports 0×0 gets plain lines, not a live view that clears the screen every frame', async () => {
    const root = tempDir('lake-sync-view');
    const env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config'), HOME: root };
    const source = JSON.parse(
      (await runLake(['sources', 'create', '--connector', 'sample', '--name', 'tiny', '--json'], { env })).stdout,
    ).id as string;
    const out = new SizedTerminal(0, 0);
    const err = new SizedTerminal(0, 0);
    const exit = await main(
      ['node', 'lake', 'sync', 'start', source, '--follow'],
      new IOStreams(out, err, new PassThrough(), env),
      env,
    );
    expect(exit).toBe(0);
    // ESC[2J (clear screen) and ESC[3J (clear scrollback) are what the live view wrote on every frame.
    expect(out.text).not.toMatch(/\x1b\[[23]J/);
    expect(out.text).toMatch(/accounts committed/);
  }, 60_000);
});
