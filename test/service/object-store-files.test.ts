import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LakeServiceError } from '../../src/service/core/errors.js';
import { ObjectStoreFiles } from '../../src/service/files/object-store-files.js';
import { objectStoreFromEnv } from '../../src/service/files/object-store-settings.js';
import { S3Objects } from '../../src/service/files/s3-objects.js';
import { homeOptionsFromEnv } from '../../src/service/home/home.js';
import { JobStore } from '../../src/service/jobs/job-store.js';
import { LakeCollector } from '../../src/service/storage/collector.js';
import { startObjectStore, type TestObjectStore } from '../helpers/object-store.js';
import { finished, submitOk } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';
import { tempDir } from '../helpers/temp.js';

const MB = 1024 * 1024;

describe('lake files in an object store, read through a bounded cache', () => {
  let store: TestObjectStore;
  beforeAll(async () => {
    store = await startObjectStore();
  });
  afterAll(async () => {
    await store?.close();
  });

  const filesAt = (prefix: string, maxBytes = 64 * MB): { root: string; files: ObjectStoreFiles } => {
    const root = tempDir('lake-cache');
    const settings = objectStoreFromEnv(store.env(prefix));
    if (!settings) throw new Error('no object store settings');
    return {
      root,
      files: new ObjectStoreFiles(root, { ...settings, multipartBytes: 5 * MB }, maxBytes),
    };
  };
  const write = (root: string, path: string, bytes: Buffer): string => {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, bytes);
    return file;
  };

  it('a file published by one cache is fetched whole by another, once for concurrent readers, multipart above the part size', async () => {
    const writer = filesAt('share');
    const small = write(writer.root, 'lake/org_a/tables/t/v1/part-0.parquet', Buffer.from('small file'));
    const big = write(writer.root, 'lake/org_a/tables/t/v1/part-1.parquet', Buffer.alloc(12 * MB, 7));
    await writer.files.publish([small, big]);
    expect((await store.keys('share/lake/')).sort()).toEqual([
      'share/lake/org_a/tables/t/v1/part-0.parquet',
      'share/lake/org_a/tables/t/v1/part-1.parquet',
    ]);

    const reader = filesAt('share');
    const gets = vi.spyOn(S3Objects.prototype, 'get');
    try {
      const path = join(reader.root, 'lake/org_a/tables/t/v1/part-1.parquet');
      const releases = await Promise.all([1, 2, 3].map(() => reader.files.hold([path])));
      expect(gets).toHaveBeenCalledTimes(1);
      expect(readFileSync(path).equals(readFileSync(big))).toBe(true);
      for (const release of releases) release();
      // Warm: no download at all.
      (await reader.files.hold([path]))();
      expect(gets).toHaveBeenCalledTimes(1);
    } finally {
      gets.mockRestore();
    }
  });

  it('refuses a copy whose size is not the one the catalog records, and keeps nothing of it', async () => {
    const writer = filesAt('sizes');
    const file = write(writer.root, 'lake/org_a/tables/t/v1/part-0.parquet', Buffer.from('twelve bytes'));
    await writer.files.publish([file]);
    const reader = filesAt('sizes');
    const path = join(reader.root, 'lake/org_a/tables/t/v1/part-0.parquet');
    const error = await reader.files.hold([path], new Map([[path, 13]])).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LakeServiceError);
    expect((error as LakeServiceError).message).toMatch(/read 12 bytes where 13 were expected/);
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(dirname(path))).toEqual([]);
    (await reader.files.hold([path], new Map([[path, 12]])))();
    expect(readFileSync(path, 'utf8')).toBe('twelve bytes');
  });

  it('evicts the least recently used copies over its size, never one held', async () => {
    const writer = filesAt('evict');
    const paths = ['a', 'b', 'c'].map((name) =>
      write(writer.root, `lake/org_a/tables/t/v1/${name}.parquet`, Buffer.alloc(2 * MB, name.charCodeAt(0))),
    );
    await writer.files.publish(paths);

    const reader = filesAt('evict', 4 * MB + 1);
    const [a, b, c] = paths.map((p) => join(reader.root, p.slice(writer.root.length + 1))) as [string, string, string];
    const holdA = await reader.files.hold([a]);
    (await reader.files.hold([b]))();
    // a is held, b is not: fetching c evicts b, the least recently used of those nobody holds.
    const holdC = await reader.files.hold([c]);
    expect(existsSync(a)).toBe(true);
    expect(existsSync(b)).toBe(false);
    expect(existsSync(c)).toBe(true);
    expect(reader.files.cache.usedBytes).toBe(4 * MB);
    holdA();
    holdC();
    // Asked again, b comes back (evicting a, now the oldest and free).
    (await reader.files.hold([b]))();
    expect(existsSync(b)).toBe(true);
    expect(existsSync(a)).toBe(false);
    // Another process on the same folder finds those copies when its cache's size first matters: older than
    // anything it used itself, they go first.
    const settings = objectStoreFromEnv(store.env('evict'));
    if (!settings) throw new Error('no object store settings');
    const next = new ObjectStoreFiles(reader.root, settings, 2 * MB + 1);
    (await next.hold([a]))();
    expect(existsSync(a)).toBe(true);
    expect(existsSync(b)).toBe(false);
    expect(existsSync(c)).toBe(false);
    expect(next.cache.usedBytes).toBe(2 * MB);
  });

  it('a store that is down is 503 service_unavailable with Retry-After, naming no host, bucket or key; it works again when back', async () => {
    const writer = filesAt('down');
    const file = write(writer.root, 'lake/org_a/tables/t/v1/part-0.parquet', Buffer.from('x'.repeat(1000)));
    await writer.files.publish([file]);
    const reader = filesAt('down');
    const path = join(reader.root, 'lake/org_a/tables/t/v1/part-0.parquet');
    await store.stop();
    try {
      for (const attempt of [() => reader.files.hold([path]), () => writer.files.publish([file])]) {
        const error = await attempt().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(LakeServiceError);
        const failure = error as LakeServiceError;
        expect(failure.code).toBe('service_unavailable');
        expect(failure.retryAfterSeconds).toBeGreaterThan(0);
        expect(failure.message).not.toMatch(/127\.0\.0\.1|lake-test|part-0|S3RVER/);
      }
      expect(existsSync(path)).toBe(false);
    } finally {
      await store.start();
    }
    (await reader.files.hold([path]))();
    expect(readFileSync(path, 'utf8')).toBe('x'.repeat(1000));
  }, 60_000);

  it('lists and removes what it keeps, and the local copies with it', async () => {
    const { root, files } = filesAt('gc');
    const kept = write(root, 'lake/org_a/tables/t/v1/part-0.parquet', Buffer.from('a'));
    const gone = write(root, 'lake/org_a/tables/t/v2/part-0.parquet', Buffer.from('bb'));
    await files.publish([kept, gone]);
    const listed = await files.list(join(root, 'lake/org_a/tables'));
    expect(listed.map((f) => [f.path, f.size]).sort()).toEqual([
      ['lake/org_a/tables/t/v1/part-0.parquet', 1],
      ['lake/org_a/tables/t/v2/part-0.parquet', 2],
    ]);
    await files.remove([gone]);
    expect(existsSync(gone)).toBe(false);
    expect(await store.keys('gc/')).toEqual(['gc/lake/org_a/tables/t/v1/part-0.parquet']);
  });
});

describe('a lake whose files are in an object store', () => {
  let store: TestObjectStore;
  let api: Harness | undefined;
  beforeAll(async () => {
    store = await startObjectStore();
  });
  afterAll(async () => {
    await api?.close();
    await store?.close();
  });

  it('writes and merges upload before the commit; results are kept there too; the collector deletes what no snapshot names', async () => {
    const prefix = `lake-${randomBytes(3).toString('hex')}`;
    const homeDir = join(tempDir('lake-home'), 'home');
    api = await inMemory.start({
      homeDir,
      home: homeOptionsFromEnv(store.env(prefix)),
      services: { gcSettings: { retentionSeconds: 0, intervalMs: 600_000 } },
    });
    const { services, home } = api;
    const org = home.organization.id;
    const write = (rows: number) =>
      services.lake.writeTable(org, 'gc', 't', `SELECT range AS i, 'row ' || range AS label FROM range(${rows})`);
    const first = await write(1000);
    const current = await write(2000);
    const stored = async (): Promise<string[]> => (await store.keys(`${prefix}/lake/${org}/tables/`)).sort();
    const keyOf = (path: string): string => `${prefix}/${path}`;
    for (const file of [...first.snapshot.files, ...current.snapshot.files])
      expect(await stored()).toContain(keyOf(file));
    // The catalog's data path is the bucket's, for other engines.
    const attach = (await (await api.request('/ducklake')).json()) as { data_path: string };
    expect(attach.data_path).toBe(`s3://${store.bucket}/${prefix}/lake/${org}/tables/`);

    // A killed write's upload: an object no snapshot names.
    const orphan = join(home.paths.data, 'lake', org, 'tables', current.path, 'v_killed', 'part-0.parquet');
    mkdirSync(dirname(orphan), { recursive: true });
    writeFileSync(orphan, 'parts of a write that never committed');
    // And a result whose query is no longer recorded (purged while the store was away).
    const staleResult = join(home.paths.data, 'results', org, 'qr_purged', 'result.parquet');
    mkdirSync(dirname(staleResult), { recursive: true });
    writeFileSync(staleResult, 'a purged query result');
    await services.lake.layout.files.publish([orphan, staleResult]);
    rmSync(dirname(orphan), { recursive: true });
    const query = await submitOk(api, 'select count(*) as n from lake.gc.t');
    const done = await finished(api, query.id);
    expect(done.status).toBe('succeeded');
    expect(await store.keys(`${prefix}/results/${org}/${query.id}/`)).toEqual([
      `${prefix}/results/${org}/${query.id}/result.parquet`,
    ]);

    // Collected an hour from now: the orphan has settled (a write still under way is left ten minutes).
    const later = new LakeCollector(
      home.db,
      services.lake.layout,
      services.lake.catalogs,
      new JobStore(home.db),
      {
        now: () => Date.now() + 3_600_000,
        sleep: async () => undefined,
      },
      { retentionSeconds: 0, intervalMs: 600_000 },
    );
    const report = await later.collect();
    expect(report.snapshots).toBeGreaterThan(0);
    expect(report.orphaned_folders).toBeGreaterThan(0);
    expect(await store.keys(`${prefix}/lake/${org}/tables/${current.path}v_killed/`)).toEqual([]);
    expect(await store.keys(`${prefix}/results/${org}/qr_purged/`)).toEqual([]);
    // A result still recorded stays.
    expect(await store.keys(`${prefix}/results/${org}/${query.id}/`)).toHaveLength(1);
    const left = await stored();
    for (const file of first.snapshot.files) expect(left).not.toContain(keyOf(file));
    for (const file of current.snapshot.files) expect(left).toContain(keyOf(file));
    expect(existsSync(join(home.paths.data, first.snapshot.files[0] as string))).toBe(false);
  }, 60_000);
});
