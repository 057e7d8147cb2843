import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compressionRegistry, CompressionType, tableFromIPC } from 'apache-arrow';
import { zstdCodec } from '../../src/service/queries/arrow-compressed.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

describe('lake query', () => {
  let env: Record<string, string>;
  let work: string;
  beforeAll(() => {
    work = tempDir('lake-query-cli');
    env = { LAKE_HOME: join(work, 'home'), LAKE_CONFIG_DIR: join(work, 'config') };
  });

  it('the newcomer command prints the demo orders; in a pipe as CSV, plain and stable', async () => {
    const result = await runLake(['query', 'select * from lake.demo.orders order by order_id limit 5'], { env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe('order_id,customer_id,ordered_at,status,total');
    expect(lines).toHaveLength(6);
    expect(lines[1]).toMatch(/^1,\d+,2024-01-01T\d\d:\d\d:\d\d,\w+,\d+\.\d\d$/);
    // `lake query run` is the same command.
    expect(
      (await runLake(['query', 'run', 'select * from lake.demo.orders order by order_id limit 5'], { env })).stdout,
    ).toBe(result.stdout);
  });

  it('prints every format, and --json as one JSON document', async () => {
    const sql = "select 1 as id, 'a,b' as name union all select 2, 'c' order by id";
    const out = async (...args: string[]) => (await runLake(['query', sql, ...args], { env })).stdout;
    expect(await out('--output', 'csv')).toBe('id,name\n1,"a,b"\n2,c\n');
    expect(await out('--output', 'tsv')).toBe('id\tname\n1\ta,b\n2\tc\n');
    expect(JSON.parse(await out('--json'))).toEqual([
      { id: 1, name: 'a,b' },
      { id: 2, name: 'c' },
    ]);
    expect(JSON.parse(await out('--output', 'json'))).toEqual([
      { id: 1, name: 'a,b' },
      { id: 2, name: 'c' },
    ]);
    expect(
      (await out('--output', 'ndjson'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { id: 1, name: 'a,b' },
      { id: 2, name: 'c' },
    ]);
    expect(await out('--output', 'markdown')).toBe('| id | name |\n| --- | --- |\n| 1 | a,b |\n| 2 | c |\n');
    expect(await out('--output', 'table')).toContain('│ a,b  │');
    const bad = await runLake(['query', sql, '--output', 'xml'], { env });
    expect(bad.code).toBe(2);
  });

  it('streams results larger than one page, and --max-rows truncates with a notice on stderr', async () => {
    const all = await runLake(['query', 'select range as n from range(2500) order by n', '--output', 'ndjson'], {
      env,
    });
    const rows = all.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).n);
    expect(rows).toEqual(Array.from({ length: 2500 }, (_, i) => i));
    expect(all.stderr).toBe('');

    const cut = await runLake(['query', 'select range as n from range(2500) order by n', '--max-rows', '1200'], {
      env,
    });
    expect(cut.code).toBe(0);
    expect(cut.stdout.trim().split('\n')).toHaveLength(1201);
    expect(cut.stderr).toMatch(/showing the first 1,200 of 2,500 rows/);
  });

  it('reads SQL from -f FILE, from - and from a pipe', async () => {
    const file = join(work, 'q.sql');
    writeFileSync(file, 'select 7 as n');
    expect((await runLake(['query', '-f', file], { env })).stdout).toBe('n\n7\n');
    expect((await runLake(['query', '-'], { env, input: 'select 8 as n' })).stdout).toBe('n\n8\n');
    expect((await runLake(['query'], { env, input: 'select 9 as n' })).stdout).toBe('n\n9\n');
    expect((await runLake(['query', '-f', join(work, 'missing.sql')], { env })).code).toBe(2);
  });

  it('a refused SQL exits 1 with code and request id; a failed query exits 1 with its message', async () => {
    const refused = await runLake(['query', 'drop table x'], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('write_not_allowed');
    expect(refused.stderr).toMatch(/request id: req_/);
    const failed = await runLake(['query', 'select * from lake.demo.missing'], { env });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('query_failed');
    expect(failed.stderr).toMatch(/missing/);
    expect(failed.stderr).toMatch(/request id: req_/);
    // With --json, the envelope names the query and the request whose answer said it failed.
    const json = await runLake(['query', '--json', 'select * from lake.demo.missing'], { env });
    expect(json.code).toBe(1);
    const envelope = JSON.parse(json.stderr) as { error: { code: string; query: string; request_id: string } };
    expect(envelope.error).toMatchObject({ code: 'query_failed', query: expect.stringMatching(/^qr_/) });
    expect(envelope.error.request_id).toMatch(/^req_/);
  });

  it('--schema, LAKE_SCHEMA and the profile name the schema unqualified names resolve in', async () => {
    const sql = 'select count(*) as n from orders';
    expect((await runLake(['query', '--schema', 'demo', sql], { env })).stdout).toBe('n\n5000\n');
    expect((await runLake(['query', sql], { env: { ...env, LAKE_SCHEMA: 'demo' } })).stdout).toBe('n\n5000\n');
    expect((await runLake(['config', 'set', 'schema', 'demo'], { env })).code).toBe(0);
    try {
      expect((await runLake(['query', sql], { env })).stdout).toBe('n\n5000\n');
      // The flag wins; a schema nobody can read is a clear error naming it.
      const missing = await runLake(['query', '--schema', 'nowhere', sql], { env });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/parameter_invalid[\s\S]*nowhere[\s\S]*request id: req_/);
    } finally {
      await runLake(['config', 'unset', 'schema'], { env });
    }
  });

  it('-p binds values to $name, ? and $1, typed by a suffix; never written into the SQL', async () => {
    const run = async (...args: string[]) => runLake(['query', '--json', ...args], { env });
    const named = await run('-p', 'top:int=3', '-p', "who=x' or '1'='1", 'select $top + 1 as n, $who as who');
    expect(JSON.parse(named.stdout)).toEqual([{ n: 4, who: "x' or '1'='1" }]);
    const positional = await run('-p', '2=b', '-p', '1=a', '-p', '3:date=2024-02-29', 'select ? || ? as s, ? as d');
    expect(JSON.parse(positional.stdout)).toEqual([{ s: 'ab', d: '2024-02-29' }]);
    const nulls = await run('-p', 'x', 'select $x is null as is_null');
    expect(JSON.parse(nulls.stdout)).toEqual([{ is_null: true }]);
    for (const bad of [
      ['-p', 'x:money=1'],
      ['-p', '1=a', '-p', 'x=b'],
      ['-p', '2=a'],
      ['-p', 'a b=1'],
    ]) {
      const result = await runLake(['query', ...bad, 'select 1'], { env });
      expect(result.code, bad.join(' ')).toBe(2);
    }
    const missing = await runLake(['query', 'select $top as n'], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/parameter_invalid[\s\S]*\$top/);
  });

  it('--row-limit, --byte-limit and --timeout are the server’s limits; --dry-run prints the columns and types', async () => {
    const cut = await runLake(['query', '--row-limit', '2', 'select range as n from range(10)'], { env });
    expect(cut.stdout).toBe('n\n0\n1\n');
    expect(cut.stderr).toContain('cut to 2 rows by --row-limit');
    const bytes = await runLake(
      ['query', '--byte-limit', '20000', 'select range as n, repeat(md5(range::varchar), 20) as s from range(5000)'],
      { env },
    );
    expect(bytes.code).toBe(0);
    expect(bytes.stderr).toContain('by --byte-limit');
    const slow = await runLake(['query', '--timeout', '1', 'select count(*) from range(1000000000000)'], { env });
    expect(slow.code).toBe(1);
    expect(slow.stderr).toContain('query_timeout');
    const dry = await runLake(['query', '--dry-run', 'select 1::int as a, 2.5 as b from range(1000000000000)'], {
      env,
    });
    expect(dry.stdout).toBe('column,type\na,INTEGER\nb,"DECIMAL(2,1)"\n');
    const broken = await runLake(['query', '--dry-run', 'select nope from lake.demo.orders'], { env });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('nope');
    expect((await runLake(['query', '--row-limit', '-1', 'select 1'], { env })).code).toBe(2);
  });

  it('--tag labels a query; lake usage sums by tag', async () => {
    expect((await runLake(['query', '--tag', 'team:cli', '--tag', 'adhoc', 'select 1 as n'], { env })).code).toBe(0);
    const usage = JSON.parse((await runLake(['usage', '--json'], { env })).stdout) as {
      by_tag: { tag: string; queries_run: number }[];
    };
    expect(usage.by_tag).toEqual(
      expect.arrayContaining([expect.objectContaining({ tag: 'team:cli', queries_run: 1 })]),
    );
    const piped = await runLake(['usage'], { env });
    expect(piped.stdout).toMatch(/^tag\.team:cli\.queries_run\t1$/m);
    expect((await runLake(['query', '--tag', 'a b', 'select 1'], { env })).stderr).toContain('parameter_invalid');
  });

  it('lake query ls lists the history, newest first, with its filters', async () => {
    await runLake(['query', '--tag', 'ls-test', 'select 1 as first_one'], { env });
    await runLake(['query', '--tag', 'ls-test', 'select * from lake.demo.not_here'], { env });
    const all = JSON.parse((await runLake(['query', 'ls', '--json', '--tag', 'ls-test'], { env })).stdout) as {
      data: { sql: string }[];
    };
    expect(all.data.map((q) => q.sql)).toEqual(['select * from lake.demo.not_here', 'select 1 as first_one']);
    const failed = await runLake(['query', 'ls', '--tag', 'ls-test', '--status', 'failed', '--output', 'csv'], { env });
    expect(failed.stdout.split('\n')[0]).toBe('id,status,created,duration_ms,tags,sql,error');
    expect(failed.stdout).toContain('not_here');
    expect(failed.stdout).not.toContain('first_one');
    const found = await runLake(['query', 'ls', '--search', 'FIRST_ONE', '--json'], { env });
    expect((JSON.parse(found.stdout) as { data: unknown[] }).data).toHaveLength(1);
    expect((await runLake(['query', 'ls', '--since', 'yesterday-ish'], { env })).code).toBe(2);
    expect((await runLake(['query', 'ls', '--before', 'March'], { env })).code).toBe(2);
    expect((await runLake(['query', 'ls', '--status', 'finished'], { env })).code).toBe(2);
  });

  it('lake query download --format csv writes the result as CSV (default name <id>.csv)', async () => {
    const run = await runLake(['query', '--print-id', "select range as n, 'x,y' as s from range(3)"], { env });
    const id = run.stderr.trim().split('\n')[0] as string;
    expect(id).toMatch(/^qr_/);
    const out = join(work, 'result.csv');
    const download = await runLake(['query', 'download', id, '--format', 'csv', '-o', out], { env });
    expect(download.code, download.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe('n,s\r\n0,"x,y"\r\n1,"x,y"\r\n2,"x,y"\r\n');
    const piped = await runLake(['query', 'download', id, '--format', 'csv', '-o', '-'], { env });
    expect(piped.stdout.split('\r\n')[0]).toBe('n,s');
    expect((await runLake(['query', 'download', id, '--format', 'xml'], { env })).code).toBe(2);
    // The job's result downloads in the same forms.
    const jobCsv = join(work, 'job.csv');
    expect((await runLake(['jobs', 'result', id, '--format', 'csv', '-o', jobCsv], { env })).code).toBe(0);
    expect(readFileSync(jobCsv, 'utf8')).toBe(readFileSync(out, 'utf8'));
    // Arrow: an IPC stream, named <id>.arrows when no -o says otherwise.
    const arrow = await runLake(['query', 'download', id, '--format', 'arrow'], { env, cwd: work });
    expect(arrow.code, arrow.stderr).toBe(0);
    const table = tableFromIPC(readFileSync(join(work, `${id}.arrows`)));
    expect(table.numRows).toBe(3);
    expect(table.schema.fields.map((f) => f.name)).toEqual(['n', 's']);
    // Compressed Arrow: the same name and rows, zstd bodies (a reader needs the codec).
    const out2 = join(work, 'zstd');
    mkdirSync(out2);
    const zstd = await runLake(['query', 'download', id, '--format', 'arrow_zstd'], { env, cwd: out2 });
    expect(zstd.code, zstd.stderr).toBe(0);
    const bytes = readFileSync(join(out2, `${id}.arrows`));
    expect(() => tableFromIPC(bytes)).toThrow(/codec/);
    compressionRegistry.set(CompressionType.ZSTD, await zstdCodec());
    const compressed = tableFromIPC(bytes);
    expect(compressed.toArray().map((row) => row?.toJSON())).toEqual(table.toArray().map((row) => row?.toJSON()));
  });

  it('statement parameters end as a clear error in local mode, never a crash or a stack trace', async () => {
    for (const sql of ['select $1', "select {'a': ?}", 'select $name']) {
      const result = await runLake(['query', sql], { env });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain('parameter_invalid');
      expect(result.stderr).toMatch(/request id: req_/);
      expect(result.stderr).not.toMatch(/\s+at |Unexpected type id/);
    }
  });

  it('a query ended by a limit says which, in local mode too (result_too_large), and exits 1', async () => {
    const result = await runLake(['query', 'select random() as r from range(5000000)'], {
      env: { ...env, LAKE_QUERY_MAX_RESULT_MB: '1' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/result_too_large: The result grew past the 1 MB limit/);
    expect(result.stderr).toMatch(/Query id: qr_/);
    // What to do, for the limit that ended it.
    expect(result.stderr).toMatch(/hint: +Keep less of the result \(an aggregate, --row-limit or --byte-limit\)/);
  });

  it('a failed query says what to do, on the command that ran it and on lake query result and download', async () => {
    const run = await runLake(['query', 'select * from no_such_schema.no_such_table'], { env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/error query_failed: .*no_such_table/);
    expect(run.stderr).toMatch(/request id: req_/);
    expect(run.stderr).toMatch(/hint: +Fix the SQL and run it again; `lake catalog ls` lists the tables you may read/);
    const id = /Query id: (qr_[0-9a-z]+)/.exec(run.stderr)?.[1];
    expect(id).toBeDefined();
    for (const again of [
      ['query', 'result', id as string],
      ['query', 'download', id as string, '-o', '-'],
    ]) {
      const result = await runLake(again, { env });
      expect(result.code, again.join(' ')).toBe(1);
      expect(result.stderr).toMatch(/error query_failed: /);
      expect(result.stderr).toContain(`Fix the SQL and run it again`);
      expect(result.stderr).toContain(`Query id: ${id}`);
    }
  });

  it('--wait in local mode stops the query it gave up on and says so (it said "check it with lake query poll"); poll agrees', async () => {
    const waiting = await runLake(
      ['query', '--wait', '0', 'select max(hash(a.range + b.range)) from range(200000) a, range(100000) b'],
      { env },
    );
    expect(waiting.code).toBe(1);
    expect(waiting.stderr).toContain('wait_expired');
    expect(waiting.stderr).toContain('was stopped');
    expect(waiting.stderr).not.toContain('lake query poll qr_');
    const id = /(qr_\w+)/.exec(waiting.stderr)?.[1] as string;
    expect(id).toMatch(/^qr_/);
    const poll = await runLake(['query', 'poll', id, '--json'], { env });
    expect(poll.code).toBe(1);
    expect(JSON.parse(poll.stdout)).toMatchObject({ id, status: expect.stringMatching(/^(cancelled|failed)$/) });
  });

  describe('against lake serve', () => {
    let server: ServeProcess;
    let token: string;
    beforeAll(async () => {
      const init = JSON.parse((await runLake(['init', '--json'], { env })).stdout) as { token: { secret: string } };
      token = init.token.secret;
      // Time enough for the slow query below to be polled as running by a second process on a loaded machine (3 s
      // was not, on a slow day); it is cancelled once seen.
      server = await startServeProcess({ LAKE_HOME: env.LAKE_HOME as string, LAKE_QUERY_TIMEOUT_SECONDS: '60' });
    });
    afterAll(async () => {
      await server.stop();
    });

    const remote = (...args: string[]) =>
      runLake(['--base-url', server.url, '--token', token, ...args], {
        env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR as string },
      });

    it('runs, polls and downloads remotely', async () => {
      const result = await remote('query', 'select count(*) as n from lake.demo.order_items');
      expect(result.stdout).toBe('n\n12500\n');

      const submitted = await fetch(`${server.url}/queries`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ sql: 'select * from lake.demo.order_items order by order_id, line_no' }),
      });
      const id = ((await submitted.json()) as { id: string }).id;
      let poll = await remote('query', 'poll', id);
      for (let i = 0; i < 50 && poll.code === 3; i++) {
        await new Promise((r) => setTimeout(r, 100));
        poll = await remote('query', 'poll', id);
      }
      expect(poll.code).toBe(0);
      expect(poll.stdout).toMatch(/status\tsucceeded/);

      const target = join(work, 'items.parquet');
      const download = await remote('query', 'download', id, '-o', target);
      expect(download.code, download.stderr).toBe(0);
      const size = statSync(target).size;
      expect(readFileSync(target).subarray(0, 4).toString()).toBe('PAR1');
      expect(existsSync(`${target}.part`)).toBe(false);

      // A download that broke off resumes from the partial file with a Range request.
      const resumed = join(work, 'resumed.parquet');
      writeFileSync(`${resumed}.part`, readFileSync(target).subarray(0, 1000));
      expect((await remote('query', 'download', id, '-o', resumed)).code).toBe(0);
      expect(readFileSync(resumed).equals(readFileSync(target))).toBe(true);
      const logs = server.logLines().filter((l) => l.path === `/files/results/${id}`);
      expect(logs.map((l) => l.status)).toEqual([200, 206]);
      expect(size).toBeGreaterThan(1000);

      // A query still running when --wait runs out: the id on stdout, exit 3; the server keeps running it.
      const slow = await remote(
        'query',
        '--wait',
        '0',
        'select max(hash(a.range + b.range)) from range(200000) a, range(100000) b',
      );
      expect(slow.code).toBe(3);
      expect(slow.stdout.trim()).toMatch(/^qr_/);
      expect((await remote('query', 'poll', slow.stdout.trim())).code).toBe(3);
      expect((await remote('jobs', 'cancel', slow.stdout.trim())).code).toBe(0);

      // A partial file longer than the result is discarded, not trusted.
      writeFileSync(`${resumed}.part`, Buffer.alloc(size + 10));
      expect((await remote('query', 'download', id, '-o', resumed)).code).toBe(0);
      expect(readFileSync(resumed).equals(readFileSync(target))).toBe(true);
    });
  });
});
