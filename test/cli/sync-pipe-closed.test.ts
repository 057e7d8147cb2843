import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hermeticHome, LAKE_BIN, runLake } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** `lake sync start … --follow --json | head -3`: the reader leaves while the local sync runs in the process. */
describe('a local sync whose output pipe closes', () => {
  it('is recorded cancelled at once, not left running until its lease lapses', async () => {
    const root = tempDir('lake-sync-pipe');
    const env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
    const source = JSON.parse(
      (
        await runLake(
          ['sources', 'create', '--connector', 'sample', '--name', 'big', '--config', 'scale=3000', '--json'],
          { env },
        )
      ).stdout,
    ).id as string;
    const { id, code } = await new Promise<{ id: string; code: number | null }>((resolve, reject) => {
      const child = spawn(process.execPath, [LAKE_BIN, 'sync', 'start', source, '--follow', '--json'], {
        env: { PATH: process.env.PATH ?? '', HOME: hermeticHome(), ...env },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let seen = '';
      let syncId = '';
      child.stdout.on('data', (d: Buffer) => {
        seen += d.toString();
        const found = /(sync_[0-9a-z]+)/.exec(seen);
        // As `head` does once it has its lines: the read end of the pipe is closed.
        if (found && !syncId) {
          syncId = found[1] as string;
          child.stdout.destroy();
        }
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('error', reject);
      child.on('close', (exit) => {
        clearTimeout(timer);
        resolve({ id: syncId, code: exit });
      });
    });
    expect(id).toMatch(/^sync_/);
    expect(code).toBe(0);
    const job = JSON.parse((await runLake(['jobs', 'get', id, '--json'], { env })).stdout) as { status: string };
    expect(job.status).toBe('cancelled');
    // And the source takes a new sync at once: nothing holds it.
    const again = await runLake(['sync', 'start', source, '--detach', '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
  }, 90_000);
});
