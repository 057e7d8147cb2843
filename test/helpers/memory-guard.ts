import { readdirSync, readFileSync } from 'node:fs';

/** The pids of a process and all its descendants, from /proc. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      /* it exited while we looked */
    }
  }
  const tree: number[] = [];
  const visit = (pid: number): void => {
    tree.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return tree;
}

function rssBytes(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * 4096;
  } catch {
    return 0;
  }
}

export interface MemoryGuard {
  /** The largest resident memory the whole tree reached. */
  peakBytes(): number;
  /** True once the guard killed the tree. */
  tripped(): boolean;
  stop(): void;
}

/**
 * Watches a process and its descendants and kills them all with SIGKILL if their resident memory together passes
 * the ceiling, so a test of a memory bomb that gets through can fail, but never take the machine down.
 */
export function guardMemory(root: number, ceilingBytes: number): MemoryGuard {
  let peak = 0;
  let tripped = false;
  const timer = setInterval(() => {
    const tree = processTree(root);
    const total = tree.reduce((sum, pid) => sum + rssBytes(pid), 0);
    peak = Math.max(peak, total);
    if (total > ceilingBytes && !tripped) {
      tripped = true;
      for (const pid of tree) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    }
  }, 50);
  timer.unref();
  return { peakBytes: () => peak, tripped: () => tripped, stop: () => clearInterval(timer) };
}

/** CPU time a process has used so far, in clock ticks (user + system, from /proc); 0 once it is gone. */
export function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/**
 * A probe for "a child of `root` is at work": each call gives the child (a worker) that has used the most CPU time
 * since the probe first saw it, in clock ticks, once it has used at least three times as much as any other child;
 * until then `{ pid: 0, ticks: 0 }`. A worker still starting up also burns CPU for a while, and on a loaded machine
 * it could lead the one running the query for a moment: the kill then hit the idle worker and the test waited out
 * the slow query. Tests wait on it (waitFor) before a kill or a cancel that needs the work to be running, instead of
 * pausing and hoping.
 */
export function busiestChild(root: number): () => { pid: number; ticks: number } {
  const firstSeen = new Map<number, number>();
  return () => {
    let busiest = { pid: 0, ticks: 0 };
    let runnerUp = 0;
    for (const pid of processTree(root).slice(1)) {
      if (!firstSeen.has(pid)) firstSeen.set(pid, cpuTicks(pid));
      const ticks = cpuTicks(pid) - (firstSeen.get(pid) as number);
      if (ticks > busiest.ticks) {
        runnerUp = busiest.ticks;
        busiest = { pid, ticks };
      } else runnerUp = Math.max(runnerUp, ticks);
    }
    return busiest.ticks >= 3 * runnerUp ? busiest : { pid: 0, ticks: 0 };
  };
}
