import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const V1_ROOT = '/sys/fs/cgroup/memory';

/** The memory cgroup (v1) this process is in, when the hierarchy is mounted and writable; undefined otherwise. */
function ownV1Group(): string | undefined {
  try {
    const line = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((l) => /^\d+:([^:]*,)?memory(,[^:]*)?:/.test(l));
    if (!line) return undefined;
    return join(V1_ROOT, line.slice(line.lastIndexOf(':') + 1));
  } catch {
    // No cgroup v1 memory hierarchy here: workers run without one (the documented fallback).
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
  private removed = false;

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

  /**
   * Removes the empty groups of lake processes that are gone: a server killed with SIGKILL could not remove its
   * workers' groups itself.
   */
  static removeStale(): void {
    const parent = ownV1Group();
    if (!parent) return;
    try {
      for (const name of readdirSync(parent)) {
        const owner = /^lake-(\d+)-w\d+$/.exec(name)?.[1];
        if (owner === undefined || processAlive(Number(owner))) continue;
        try {
          rmdirSync(join(parent, name));
        } catch {
          /* still in use, or not ours to remove */
        }
      }
    } catch {
      /* the hierarchy cannot be read: nothing to clean */
    }
  }

  add(pid: number): boolean {
    try {
      writeFileSync(join(this.dir, 'cgroup.procs'), String(pid));
      return true;
    } catch {
      // Not ours to write (a container without delegation): the worker runs without the kernel's limit.
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
      // The group is gone or unreadable: no kill can be shown, so the crash is reported as a crash.
      return false;
    }
  }

  /**
   * Removes the group. The kernel allows it only once its process has fully left, a moment after the process was
   * reaped; until then each call tries again. True once it is gone.
   */
  remove(): boolean {
    if (this.removed) return true;
    try {
      rmdirSync(this.dir);
      this.removed = true;
    } catch (error) {
      this.removed = (error as NodeJS.ErrnoException).code === 'ENOENT';
    }
    return this.removed;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
