import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryCgroup } from './memory-cgroup.js';
import type { FromWorker, ToWorker } from './worker-protocol.js';

const PAGE_BYTES = 4096;

/** dist/query-worker.js of this installation, found from wherever this module runs (the bundle, tsc output, tests). */
function workerScript(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('The lake installation has no package.json above its modules.');
    dir = up;
  }
  return join(dir, 'dist', 'query-worker.js');
}

/** The environment a worker gets: nothing of the server's own (tokens, database URLs, secrets). */
function workerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { TZ: 'UTC' };
  for (const name of ['PATH', 'LANG', 'LC_ALL']) if (process.env[name]) env[name] = process.env[name];
  return env;
}

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The kernel killed it for going over its memory cgroup's limit. */
  outOfMemory: boolean;
}

let nextWorker = 0;

/**
 * One forked worker process and what the server knows of it: whether it is ready, its resident memory (read from
 * /proc, so a worker that cannot answer still can be measured), and its memory cgroup where the system has one.
 */
export class WorkerProcess {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<WorkerExit>;
  readonly number = ++nextWorker;
  readonly cgroup: MemoryCgroup | undefined;
  /** Resident memory when it said it was ready: the base its growth is measured from. */
  baseRssBytes = 0;
  queriesRun = 0;
  alive = true;
  private listener: ((message: FromWorker) => void) | undefined;
  private exitListener: ((exit: WorkerExit) => void) | undefined;

  constructor(
    readonly hardLimitBytes: number,
    warmLimits: { memoryLimit: string; threads: number },
    useCgroup: boolean,
  ) {
    this.cgroup = useCgroup ? MemoryCgroup.create(`lake-${process.pid}-w${this.number}`, hardLimitBytes) : undefined;
    this.child = fork(workerScript(), [warmLimits.memoryLimit, String(warmLimits.threads)], {
      execArgv: [],
      env: workerEnv(),
      stdio: ['ignore', 'ignore', process.env.LAKE_WORKER_DEBUG ? 'inherit' : 'ignore', 'ipc'],
      serialization: 'json',
    });
    if (this.child.pid !== undefined) this.cgroup?.add(this.child.pid);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.alive = false;
        const outOfMemory = this.cgroup?.oomKilled() ?? false;
        void this.removeCgroup();
        const exit = { code, signal, outOfMemory };
        this.exitListener?.(exit);
        resolve(exit);
      });
    });
    // A worker that cannot even start must not leave anyone waiting for it to be ready.
    this.child.on('error', () => this.kill());
    this.ready = new Promise<void>((resolve, reject) => {
      this.child.on('message', (message: FromWorker) => {
        if (message.type === 'ready') {
          this.baseRssBytes = message.rssBytes;
          resolve();
        } else this.listener?.(message);
      });
      void this.exited.then(() => reject(new Error('The query worker exited before it was ready.')));
    });
    // Whoever awaits `ready` hears of the failure; this keeps an unawaited one from ending the process.
    this.ready.catch(() => undefined);
  }

  /** Where this worker's messages go; one receiver at a time (the query or inspection it serves). */
  onMessage(listener: ((message: FromWorker) => void) | undefined): void {
    this.listener = listener;
  }

  /** Who hears of its exit while it serves them (the query or inspection in progress); one at a time. */
  onExit(listener: ((exit: WorkerExit) => void) | undefined): void {
    this.exitListener = listener;
  }

  send(message: ToWorker): void {
    if (this.alive && this.child.connected) this.child.send(message);
  }

  /** Resident memory now, from /proc; 0 once it has gone. */
  rssBytes(): number {
    try {
      const statm = readFileSync(`/proc/${this.child.pid}/statm`, 'utf8');
      return Number(statm.split(' ')[1]) * PAGE_BYTES;
    } catch {
      // The process has exited and /proc no longer has it: it holds no memory.
      return 0;
    }
  }

  /** Removes its memory cgroup once it has left it, trying for up to a second; resolves either way. */
  async removeCgroup(): Promise<void> {
    for (let attempt = 0; this.cgroup && !this.cgroup.remove() && attempt < 20; attempt++)
      await new Promise((r) => setTimeout(r, 50));
  }

  kill(): void {
    if (this.alive) this.child.kill('SIGKILL');
  }
}
