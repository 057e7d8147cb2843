import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export interface TestObjectStore {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  bucket: string;
  /** What a lake process needs to keep its files there (no AWS files read: the keys are given). */
  env(prefix: string): Record<string, string>;
  /** Keys of the objects under a prefix. */
  keys(prefix: string): Promise<string[]>;
  /** Stops answering (connections refused) until start(). */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** An S3-compatible server (s3rver) on a free port of 127.0.0.1, its objects in a temporary folder. */
export async function startObjectStore(bucket = 'lake-test'): Promise<TestObjectStore> {
  const directory = mkdtempSync(join(tmpdir(), 'lake-s3-'));
  let port = 0;
  let server: S3rver;
  const run = async (): Promise<void> => {
    server = new S3rver({ port, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket }] });
    ({ port } = await server.run());
  };
  await run();
  const endpoint = `http://127.0.0.1:${port}`;
  const keys = async (prefix: string): Promise<string[]> => {
    const answer = await fetch(`${endpoint}/${bucket}?list-type=2&prefix=${encodeURIComponent(prefix)}`);
    const text = await answer.text();
    return [...text.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1] as string);
  };
  return {
    endpoint,
    bucket,
    env: (prefix) => ({
      LAKE_DATA_URL: `s3://${bucket}/${prefix}`,
      LAKE_S3_PATH_STYLE: 'true',
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_SHARED_CREDENTIALS_FILE: join(directory, 'no-credentials'),
      AWS_CONFIG_FILE: join(directory, 'no-config'),
    }),
    keys,
    stop: () => server.close(),
    start: run,
    close: async () => {
      await server.close().catch(() => undefined);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
