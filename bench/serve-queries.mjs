#!/usr/bin/env node
// Small queries through `lake serve` and the noisy-neighbour case, against a baseline measured in the same run
// (not a timed test). Usage: node bench/serve-queries.mjs [serial-queries]
//  1. serial: submit `select 1`, then GET ?wait= until its rows come back; p50 and p90 latency.
//  2. throughput: 8 concurrent clients doing the same; queries per second.
//  3. noisy neighbour: organization A keeps its in-flight ceiling (8) of long queries; p50 of B's `select 1`.
//  4. the cost of Prometheus metrics: 1 and 2 again with LAKE_METRICS_ADDR set.
// Baseline: 1 and 2 against the same API served by this process with the in-process engine (how lake serve ran
// queries before the worker pool), on an identical home.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServe } from './serve-process.mjs';

const serial = Number(process.argv[2] ?? 300);
const root = fileURLToPath(new URL('..', import.meta.url));
const percentile = (values, p) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];
const { openHome } = await import(join(root, 'dist/service/home/home.js'));

async function prepareHome() {
  const dir = join(mkdtempSync(join(tmpdir(), 'lake-bench-serve-')), 'home');
  const home = await openHome(dir);
  const other = await home.directory.createOrganization('Neighbour');
  const user = await home.directory.createUser(other.id, 'N', 'owner');
  const neighbour = (
    await home.credentials.issue({
      kind: 'pat',
      organizationId: other.id,
      userId: user.id,
      name: 'n',
      scopes: ['query:read', 'jobs:read', 'jobs:manage'],
    })
  ).secret;
  const owner = home.ownerToken;
  await home.close();
  return { dir, owner, neighbour };
}

const startServeOn = (dir) =>
  startServe({ LAKE_HOME: dir, LAKE_RATE_LIMIT_PER_CALLER: '0', LAKE_RATE_LIMIT_PER_ORG: '0' });

async function startInProcess(dir) {
  const { createServices } = await import(join(root, 'dist/service/assembly/services.js'));
  const { createApp } = await import(join(root, 'dist/service/api/server/app.js'));
  const { startServer } = await import(join(root, 'dist/service/api/server/server.js'));
  const home = await openHome(dir);
  const services = await createServices(home, { rateLimits: false });
  services.queries.warm();
  const server = await startServer(createApp(services, { log: () => {} }), {
    host: '127.0.0.1',
    port: 0,
    log: () => {},
  });
  return { url: server.url, stop: async () => (await server.close(1000), await services.close(), await home.close()) };
}

async function smallQuery(url, token, sql = 'select 1 as one') {
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  const started = performance.now();
  const submitted = await (
    await fetch(`${url}/queries`, { method: 'POST', headers, body: JSON.stringify({ sql }) })
  ).json();
  let body;
  do body = await (await fetch(`${url}/queries/${submitted.id}?wait=10&format=inline`, { headers })).json();
  while (body.status === 'queued' || body.status === 'running');
  if (body.status !== 'succeeded') throw new Error(JSON.stringify(body));
  return performance.now() - started;
}

async function measure(target, token) {
  for (let i = 0; i < 20; i++) await smallQuery(target.url, token);
  const latencies = [];
  for (let i = 0; i < serial; i++) latencies.push(await smallQuery(target.url, token));
  const total = serial;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next++ < total) await smallQuery(target.url, token);
    }),
  );
  const perSecond = total / ((performance.now() - started) / 1000);
  return { p50: percentile(latencies, 0.5), p90: percentile(latencies, 0.9), perSecond };
}

const baselineHome = await prepareHome();
const baselineTarget = await startInProcess(baselineHome.dir);
const baseline = await measure(baselineTarget, baselineHome.owner);
await baselineTarget.stop();

const homeForServe = await prepareHome();
const serve = await startServeOn(homeForServe.dir);
const pooled = await measure(serve, homeForServe.owner);
const fmt = (n) => n.toFixed(1);
console.log(
  `1. serial select 1 (submit + wait until rows): p50 ${fmt(pooled.p50)} ms, p90 ${fmt(pooled.p90)} ms; in-process engine p50 ${fmt(baseline.p50)} ms; ratio ${(pooled.p50 / baseline.p50).toFixed(2)} (target p50 ≤ 15 ms)`,
);
console.log(
  `2. 8 concurrent clients: ${fmt(pooled.perSecond)} queries/s; in-process engine ${fmt(baseline.perSecond)}/s; ratio ${(pooled.perSecond / baseline.perSecond).toFixed(2)} (target ≥ 100/s)`,
);

// 3. Organization A at its ceiling of long queries; B's small queries.
const headers = { Authorization: `Bearer ${homeForServe.owner}`, 'Content-Type': 'application/json' };
const long = [];
for (let i = 0; i < 8; i++) {
  const body = await (
    await fetch(`${serve.url}/queries`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ sql: `select sum(hash(i)) from range(40000000000) t(i) -- ${i}` }),
    })
  ).json();
  long.push(body.id);
}
await new Promise((r) => setTimeout(r, 500));
const neighbour = [];
for (let i = 0; i < 40; i++) neighbour.push(await smallQuery(serve.url, homeForServe.neighbour));
console.log(
  `3. noisy neighbour: B's select 1 p50 ${fmt(percentile(neighbour, 0.5))} ms, p90 ${fmt(percentile(neighbour, 0.9))} ms while A holds 8 long queries (target p50 ≤ 1000 ms)`,
);
for (const id of long) await fetch(`${serve.url}/jobs/${id}/cancel`, { method: 'POST', headers });
await serve.stop();

// 4. The same as 1 and 2 with Prometheus metrics on (LAKE_METRICS_ADDR), against 1 and 2 above (metrics off).
const metricsHome = await prepareHome();
const counted = await startServe({
  LAKE_HOME: metricsHome.dir,
  LAKE_RATE_LIMIT_PER_CALLER: '0',
  LAKE_RATE_LIMIT_PER_ORG: '0',
  LAKE_METRICS_ADDR: '127.0.0.1:0',
});
const withMetrics = await measure(counted, metricsHome.owner);
await counted.stop();
console.log(
  `4. metrics on: serial p50 ${fmt(withMetrics.p50)} ms (off ${fmt(pooled.p50)} ms, ratio ${(withMetrics.p50 / pooled.p50).toFixed(3)}); 8 clients ${fmt(withMetrics.perSecond)} queries/s (off ${fmt(pooled.perSecond)}/s, ratio ${(withMetrics.perSecond / pooled.perSecond).toFixed(3)}) (target: within 5%)`,
);
