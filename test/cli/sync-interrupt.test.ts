import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hermeticHome, LAKE_BIN, runLake } from '../helpers/cli.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';
import { asDrawn, startOnTerminal } from '../helpers/terminal.js';

/** Runs `lake` in a pipe, sends ^C (SIGINT) once its output shows `ready`, and returns what it said and its code. */
function interruptWhen(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LAKE_BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: hermeticHome(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let sent = false;
    const check = (): void => {
      if (!sent && ready.test(stdout + stderr)) {
        sent = true;
        child.kill('SIGINT');
      }
    };
    child.stdout.on('data', (d: Buffer) => ((stdout += d.toString()), check()));
    child.stderr.on('data', (d: Buffer) => ((stderr += d.toString()), check()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('^C during lake sync start --follow', () => {
  let server: ServeProcess | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it('in local mode, cancels the sync and says so; the sync ends cancelled, not running', async () => {
    const root = tempDir('lake-sync-int');
    const env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
    const source = JSON.parse(
      (
        await runLake(
          ['sources', 'create', '--connector', 'sample', '--name', 'big', '--config', 'scale=3000', '--json'],
          { env },
        )
      ).stdout,
    ).id as string;
    const run = await interruptWhen(['sync', 'start', source, '--follow'], env, /extracting|loading/);
    expect(run.code).toBe(130);
    expect(run.stderr).toMatch(/cancelling sync_\w+/);
    const id = /(sync_\w+)/.exec(run.stderr)?.[1] as string;
    const job = await runLake(['jobs', 'get', id, '--json'], { env });
    expect(JSON.parse(job.stdout).status).toBe('cancelled');
    // A new sync is accepted at once (the old one no longer holds the source).
    const again = await runLake(['sync', 'start', source, '--detach', '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
  }, 90_000);

  it('on a terminal, the ^C notice stays on the screen after the live view ends (a later frame used to erase it)', async () => {
    const root = tempDir('lake-sync-int-tty');
    const home = join(root, 'home');
    const source = JSON.parse(
      (
        await runLake(
          [
            '--home',
            home,
            'sources',
            'create',
            '--connector',
            'sample',
            '--name',
            'big',
            '--config',
            'scale=3000',
            '--json',
          ],
          { env: {} },
        )
      ).stdout,
    ).id as string;
    const shell = startOnTerminal(['--home', home, 'sync', 'start', source, '--follow'], { columns: 120, rows: 30 });
    await shell.waitFor(/(extracting|loading)/, { timeoutMs: 60_000 });
    shell.send('\x03');
    expect(await shell.exited).toBe(130);
    const drawn = asDrawn(shell.raw);
    // The live view's last frame, then the notice below it, not erased by a later frame.
    expect(drawn).toMatch(/sync (running|cancelled)[\s\S]*\nlake: cancelling sync_\w+; tables already committed stay/);
  }, 120_000);

  it('against lake serve, says the sync goes on and how to follow or cancel it', async () => {
    const root = tempDir('lake-sync-int-remote');
    const home = join(root, 'home');
    const init = JSON.parse((await runLake(['init', '--json'], { env: { LAKE_HOME: home } })).stdout) as {
      token: { secret: string };
    };
    server = await startServeProcess({ LAKE_HOME: home });
    const env = { LAKE_BASE_URL: server.url, LAKE_TOKEN: init.token.secret, LAKE_CONFIG_DIR: join(root, 'config') };
    const source = JSON.parse(
      (
        await runLake(
          ['sources', 'create', '--connector', 'sample', '--name', 'big', '--config', 'scale=3000', '--json'],
          { env },
        )
      ).stdout,
    ).id as string;
    const run = await interruptWhen(['sync', 'start', source, '--follow'], env, /extracting|loading/);
    expect(run.code).toBe(130);
    expect(run.stderr).toMatch(/goes on running on the server/);
    expect(run.stderr).toMatch(/lake jobs events sync_\w+/);
    expect(run.stderr).toMatch(/lake jobs cancel sync_\w+/);
    const id = /(sync_\w+)/.exec(run.stderr)?.[1] as string;
    let status = '';
    for (let i = 0; i < 300 && !['succeeded', 'failed', 'cancelled'].includes(status); i++) {
      status = JSON.parse((await runLake(['jobs', 'get', id, '--json'], { env })).stdout).status as string;
      if (status === 'running' || status === 'queued') await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe('succeeded');
  }, 120_000);
});
