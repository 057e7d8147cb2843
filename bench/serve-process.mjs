// Helpers the benches share: a `lake serve` process of their own, and the resident memory of a process tree.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Every server a bench started and has not stopped: killed when the bench exits, even by an error. */
const started = new Set();
process.on('exit', () => {
  for (const child of started) child.kill('SIGKILL');
});

/** Starts `lake serve --port 0` (of this checkout, or another built one) with exactly this environment (plus PATH); resolves once it listens. */
export async function startServe(env, checkout = root) {
  const child = spawn(process.execPath, [join(checkout, 'bin/lake.js'), 'serve', '--port', '0'], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`lake serve exited with ${code}`)));
    child.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.includes('"listening"'));
      if (line) resolve(JSON.parse(line).url);
    });
  });
  started.add(child);
  child.once('exit', () => started.delete(child));
  return { child, url, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))) };
}

/** The pids of a process and all its descendants. */
export function processTree(rootPid) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {}
  }
  const out = [];
  const visit = (pid) => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) visit(c);
  };
  visit(rootPid);
  return out;
}

export function rssBytes(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * 4096;
  } catch {
    return 0;
  }
}
