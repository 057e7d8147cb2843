#!/usr/bin/env node
// A large result downloaded in each form (not a timed test): against `lake serve`, the time from asking for the
// signed link (which makes the CSV or the Arrow stream the first time) to the last byte on disk, for Parquet, CSV
// and Arrow; against
// DuckDB's own `COPY (…) TO 'x.csv'` of the same query in this process, in the same run. Also the server's peak
// resident memory (VmHWM of lake serve itself; queries run in its workers). Where curl is installed, the CSV's first
// ask also by curl, for a second run of the query. Usage: node bench/result-downloads.mjs [rows]
// (default 10,000,000)
import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { startServe } from './serve-process.mjs';

const rows = Number(process.argv[2] ?? 10_000_000);
const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'lake-bench-downloads-'));
const sql = `select range as id, range * 2.5 as amount, 'customer ' || (range % 100000)::varchar as customer, DATE '2024-01-01' + (range % 365)::int as day from range(${rows})`;

const { DuckDBInstance } = await import(join(root, 'node_modules/@duckdb/node-api/lib/index.js'));
const instance = await DuckDBInstance.create(':memory:');
const connection = await instance.connect();
let started = performance.now();
await connection.run(`COPY (${sql}) TO '${join(dir, 'duckdb.csv')}' (HEADER)`);
const baseline = (performance.now() - started) / 1000;
connection.closeSync();
console.log(
  `DuckDB COPY TO csv: ${baseline.toFixed(2)} s (${(statSync(join(dir, 'duckdb.csv')).size / 2 ** 20).toFixed(0)} MB)`,
);

const home = join(dir, 'home');
const hasCurl = () => {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const server = await startServe({ LAKE_HOME: home });
const peak = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))?.[1]) * 1024;
try {
  const token = readFileSync(join(home, 'owner.token'), 'utf8').trim();
  const api = async (path, init = {}) => {
    const response = await fetch(`${server.url}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...init.headers },
    });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  /** The query once it has ended; it must have succeeded. */
  const finished = async (submitted) => {
    let query = submitted;
    while (query.status === 'running' || query.status === 'queued')
      query = await api(`/queries/${submitted.id}?wait=20`);
    if (query.status !== 'succeeded') throw new Error(JSON.stringify(query));
    return query;
  };
  const submitted = await finished(await api('/queries', { method: 'POST', body: JSON.stringify({ sql }) }));
  const afterQuery = peak();

  /** Asks for the signed link in `form` and downloads it to a file: seconds, bytes. */
  const download = async (form) => {
    const begin = performance.now();
    const answer = await api(
      `/queries/${submitted.id}?format=files${form === 'parquet' ? '' : `&file_format=${form}`}`,
    );
    const response = await fetch(answer.files[0].url);
    await pipeline(Readable.fromWeb(response.body), createWriteStream(join(dir, `result.${form}`)));
    return { seconds: (performance.now() - begin) / 1000, bytes: statSync(join(dir, `result.${form}`)).size };
  };
  const parquet = await download('parquet');
  console.log(`Parquet download: ${parquet.seconds.toFixed(2)} s (${(parquet.bytes / 2 ** 20).toFixed(0)} MB)`);
  const csv = await download('csv');
  console.log(
    `CSV download (made on the first ask): ${csv.seconds.toFixed(2)} s (${(csv.bytes / 2 ** 20).toFixed(0)} MB); rate ÷ DuckDB's COPY ${(baseline / csv.seconds).toFixed(2)} (target >= 0.8)`,
  );
  const again = await download('csv');
  console.log(`CSV download again (already made): ${again.seconds.toFixed(2)} s`);
  // The same first ask by curl (a shell script's client), for a second run of the query so its CSV is made anew:
  // Node's fetch piped to a file takes 432 MB at about a quarter of the rate curl does on this machine, so the line
  // above measures the bench's own client as much as the server.
  if (hasCurl()) {
    const second = await finished(await api('/queries', { method: 'POST', body: JSON.stringify({ sql }) }));
    const begin = performance.now();
    const answer = await api(`/queries/${second.id}?format=files&file_format=csv`);
    execFileSync('curl', ['--silent', '--fail', '--output', join(dir, 'curl.csv'), answer.files[0].url]);
    const seconds = (performance.now() - begin) / 1000;
    console.log(
      `CSV download by curl (made on the first ask, another run of the query): ${seconds.toFixed(2)} s (${(statSync(join(dir, 'curl.csv')).size / 2 ** 20).toFixed(0)} MB); rate ÷ DuckDB's COPY ${(baseline / seconds).toFixed(2)}`,
    );
  }
  const arrow = await download('arrow');
  console.log(
    `Arrow IPC stream download (made on the first ask): ${arrow.seconds.toFixed(2)} s (${(arrow.bytes / 2 ** 20).toFixed(0)} MB); rate ÷ the Parquet download's ${(parquet.seconds / arrow.seconds).toFixed(2)} (target >= 0.8)`,
  );
  const arrowAgain = await download('arrow');
  console.log(
    `Arrow download again (already made): ${arrowAgain.seconds.toFixed(2)} s; rate ÷ the Parquet download's ${(parquet.seconds / arrowAgain.seconds).toFixed(2)}`,
  );
  const zstd = await download('arrow_zstd');
  console.log(
    `Arrow with zstd bodies and dictionaries (made on the first ask): ${zstd.seconds.toFixed(2)} s (${(zstd.bytes / 2 ** 20).toFixed(1)} MB); rate ÷ the Parquet download's ${(parquet.seconds / zstd.seconds).toFixed(2)}`,
  );
  const zstdAgain = await download('arrow_zstd');
  console.log(
    `Arrow with zstd again (already made): ${zstdAgain.seconds.toFixed(2)} s; rate ÷ the Parquet download's ${(parquet.seconds / zstdAgain.seconds).toFixed(2)} (target >= 0.8)`,
  );
  // Every row is there: each stream is read back batch by batch (apache-arrow; zstd through lake's own codec).
  const { RecordBatchReader, compressionRegistry, CompressionType } = await import('apache-arrow');
  const { zstdCodec } = await import(join(root, 'dist/service/queries/arrow-compressed.js'));
  compressionRegistry.set(CompressionType.ZSTD, await zstdCodec());
  for (const form of ['arrow', 'arrow_zstd']) {
    let counted = 0;
    for await (const batch of await RecordBatchReader.from(createReadStream(join(dir, `result.${form}`))))
      counted += batch.numRows;
    if (counted !== rows) throw new Error(`the ${form} stream holds ${counted} rows, not ${rows}`);
  }
  console.log(
    `lake serve peak RSS: ${(afterQuery / 2 ** 20).toFixed(0)} MB after the query, ${(peak() / 2 ** 20).toFixed(0)} MB after the downloads`,
  );
} finally {
  await server.stop();
}
