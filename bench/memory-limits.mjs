#!/usr/bin/env node
// Which memory limit holds against hostile SQL (docs/decisions.md, "Which memory limit holds"). Not a timed test:
// for each memory bomb, under a 256MB per-query limit, it starts `lake serve` with the workers' memory cgroups on,
// then off (the resident-memory watchdog alone), and prints how the query ended and the peak resident memory of the
// whole server process tree. A guard kills the tree past 6 GB. Usage: node bench/memory-limits.mjs
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processTree, rssBytes, startServe } from './serve-process.mjs';
const BOMBS = [
  'select len(range(1000000000))',
  "select length(repeat('x', 2000000000))",
  "select damerau_levenshtein(repeat('a',15000), repeat('b',15000))",
];
const CEILING = 6 * 2 ** 30;

async function serve(cgroups) {
  const home = join(mkdtempSync(join(tmpdir(), 'lake-bench-mem-')), 'home');
  const env = {
    LAKE_HOME: home,
    LAKE_QUERY_MEMORY_LIMIT: '256MB',
    LAKE_QUERY_WORKERS: '2',
    LAKE_QUERY_MEMORY_CGROUP: cgroups ? '1' : '0',
    LAKE_RATE_LIMIT_PER_CALLER: '0',
    LAKE_RATE_LIMIT_PER_ORG: '0',
  };
  const server = await startServe(env);
  const token = readFileSync(join(home, 'owner.token'), 'utf8').trim();
  return { ...server, token };
}

for (const cgroups of [true, false]) {
  const { child, url, token, stop } = await serve(cgroups);
  for (const sql of BOMBS) {
    let peak = 0;
    const watch = setInterval(() => {
      const pids = processTree(child.pid);
      const total = pids.reduce((s, p) => s + rssBytes(p), 0);
      peak = Math.max(peak, total);
      if (total > CEILING)
        for (const p of pids)
          try {
            process.kill(p, 'SIGKILL');
          } catch {}
    }, 20);
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    const started = performance.now();
    const { id } = await (
      await fetch(`${url}/queries`, { method: 'POST', headers, body: JSON.stringify({ sql }) })
    ).json();
    let job;
    do {
      await fetch(`${url}/queries/${id}?wait=5`, { headers });
      job = await (await fetch(`${url}/jobs/${id}`, { headers })).json();
    } while (job.status === 'running' || job.status === 'queued');
    clearInterval(watch);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `${cgroups ? 'cgroup+watchdog' : 'watchdog only  '}  ${job.error?.code ?? job.status}  peak tree RSS ${(peak / 2 ** 20).toFixed(0)} MB  ${seconds} s  ${sql}`,
    );
  }
  await stop();
}
