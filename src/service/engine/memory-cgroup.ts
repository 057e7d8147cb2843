import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const V1_ROOT = '/sys/fs/cgroup/memory';

/** The memory cgroup (v1) this process is in, when the hierarchy is mounted and writable; undefined otherwise. */
function ownV1Group(): string | undefined {
  try {
    const line = readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => /^\d+:([^:]*,)?memory(,[^:]*)?:/.test(l));
    if (!line) return undefined;
    return join(V1_ROOT, line.slice(line.lastIndexOf(':') + 1));
  } catch {
    return undefined;
  }
}

/**
 * A memory cgroup holding one worker process: the kernel refuses the worker more than its limit and kills it
 * (the OOM killer, SIGKILL) rather than let it take the machine. This is the limit that holds against allocations
 * DuckDB's memory_limit does not see (docs/decisions.md, "Which memory limit holds"). Needs cgroup v1's memory
 * controller and the right to create a group (root, or a delegated group); where that is missing, create returns
 * undefined and the pool's resident-memory watchdog is the only limit.
 */
export class MemoryCgroup {
  private constructor(private readonly dir: string) {}

  static create(name: string, limitBytes: number): MemoryCgroup | undefined {
    const parent = ownV1Group();
    if (!parent) return undefined;
    const dir = join(parent, name);
    try {
      mkdirSync(dir);
      writeFileSync(join(dir, 'memory.limit_in_bytes'), String(limitBytes));
      try {
        // Swap would let a worker go past its limit slowly instead of being stopped; not every kernel accounts it.
        writeFileSync(join(dir, 'memory.memsw.limit_in_bytes'), String(limitBytes));
      } catch {
        /* no swap accounting: the memory limit alone applies */
      }
      return new MemoryCgroup(dir);
    } catch {
      try {
        rmdirSync(dir);
      } catch {
        /* it was never made */
      }
      return undefined;
    }
  }

  add(pid: number): boolean {
    try {
      writeFileSync(join(this.dir, 'cgroup.procs'), String(pid));
      return true;
    } catch {
      return false;
    }
  }

  /** True once the kernel killed a process of this group for going over the limit. */
  oomKilled(): boolean {
    try {
      const control = readFileSync(join(this.dir, 'memory.oom_control'), 'utf8');
      const kills = /oom_kill (\d+)/.exec(control);
      if (kills) return Number(kills[1]) > 0;
      return Number(readFileSync(join(this.dir, 'memory.failcnt'), 'utf8')) > 0;
    } catch {
      return false;
    }
  }

  /** Removes the group; the kernel allows that only once its process has left, so it tries for a few seconds. */
  remove(attempt = 0): void {
    try {
      rmdirSync(this.dir);
    } catch {
      if (attempt < 30) setTimeout(() => this.remove(attempt + 1), 100).unref();
    }
  }
}
