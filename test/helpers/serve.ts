import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { SERVE_DENY } from '../../src/service/net/outbound.js';
import { hermeticHome, LAKE_BIN } from './cli.js';

/**
 * The tests' servers sync from the machine's PostgreSQL on 127.0.0.1, so, as an operator running sources on the
 * server's own machine would, they take lake serve's deny list without loopback (lake's own database stays refused).
 */
const TEST_SOURCES_DENY = SERVE_DENY.filter((entry) => !['127.0.0.0/8', '::1/128', 'localhost'].includes(entry)).join(
  ',',
);

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  logLines(): Record<string, unknown>[];
  /** What the process wrote to stderr (a crash's stack, if it had one). */
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `lake serve --port 0` as its own process and waits for its "listening" log line. */
export function startServeProcess(
  env: Record<string, string>,
  extraArgs: string[] = [],
  /** Another installation's bin/lake.js (a test's broken copy); the build's own by default. */
  bin: string = LAKE_BIN,
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', ...extraArgs], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: hermeticHome(),
      LAKE_SOURCES_DENY: TEST_SOURCES_DENY,
      LAKE_DESTINATIONS_DENY: TEST_SOURCES_DENY,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const logLines = (): Record<string, unknown>[] =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`lake serve did not start: ${stdout}`)), 15_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const listening = logLines().find((l) => l.msg === 'listening');
      if (listening) {
        clearTimeout(timer);
        resolve({
          url: listening.url as string,
          child,
          logLines,
          stderr: () => stderr,
          stop: async (signal = 'SIGTERM') => {
            child.kill(signal);
            const code = await exited;
            // Its log is one JSON line per request or event: anything else (a warning Node printed, a stack) is a
            // line an operator's log pipeline cannot read. A process killed outright may leave a line cut short.
            const odd = stdout.split('\n').filter((line) => line !== '' && !line.startsWith('{'));
            if (signal !== 'SIGKILL' && (odd.length > 0 || stderr !== ''))
              throw new Error(`lake serve printed outside its JSON log:\n${[...odd, stderr].join('\n')}`);
            return code;
          },
        });
      }
    });
    child.on('exit', (code) => reject(new Error(`lake serve exited with ${code}`)));
  });
}

/**
 * The owner's view of a `lake serve` process over HTTP (the token lake serve wrote in `home`): `api` sends a request
 * and reads its JSON; `ended` waits for a job to end and returns it; `firstRow` runs a query and gives its first row.
 * `server` gives the process now (a test that kills and starts it again keeps one client).
 */
export function ownerApi(
  home: string,
  server: () => ServeProcess,
): {
  api: (path: string, init?: RequestInit) => Promise<Record<string, any>>;
  ended: (jobId: string) => Promise<Record<string, any>>;
  firstRow: (sql: string) => Promise<Record<string, any>>;
} {
  const token = readFileSync(join(home, 'owner.token'), 'utf8').trim();
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  const api = async (path: string, init: RequestInit = {}): Promise<Record<string, any>> =>
    (await (await fetch(`${server().url}${path}`, { ...init, headers })).json()) as Record<string, any>;
  const ended = async (jobId: string): Promise<Record<string, any>> => {
    for (let i = 0; i < 1200; i++) {
      const job = await api(`/jobs/${jobId}`);
      if (job.status !== 'queued' && job.status !== 'running') return job;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`job ${jobId} never ended`);
  };
  const firstRow = async (sql: string): Promise<Record<string, any>> => {
    const query = await api('/queries', { method: 'POST', body: JSON.stringify({ sql }) });
    return (await api(`/queries/${query.id}?wait=30&format=inline`)).data[0];
  };
  return { api, ended, firstRow };
}
