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

export interface StoreProxy {
  /** http://127.0.0.1:<port>, to use as the store's endpoint. */
  endpoint: string;
  /**
   * Decides what becomes of each PUT: at 'request' (nothing has reached the store) and at 'stored' (the store has
   * the object, the client has not heard so): 'forward' it, or 'hang' (never answered, as with a process killed then).
   */
  onPut: (phase: 'request' | 'stored') => 'forward' | 'hang';
  close(): Promise<void>;
}

/** A pass-through proxy in front of an object store, that can leave an upload hanging at either side of the store. */
export async function startStoreProxy(target: string): Promise<StoreProxy> {
  const { createServer, request } = await import('node:http');
  const upstream = new URL(target);
  const proxy: StoreProxy = { endpoint: '', onPut: () => 'forward', close: async () => undefined };
  const hanging: import('node:http').ServerResponse[] = [];
  const server = createServer((incoming, answer) => {
    const put = incoming.method === 'PUT';
    if (put && proxy.onPut('request') === 'hang') {
      hanging.push(answer);
      incoming.resume();
      return;
    }
    const outgoing = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (response) => {
        if (put && proxy.onPut('stored') === 'hang') {
          response.resume();
          hanging.push(answer);
          return;
        }
        answer.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(answer);
      },
    );
    outgoing.on('error', () => answer.destroy());
    incoming.pipe(outgoing);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as import('node:net').AddressInfo;
  proxy.endpoint = `http://127.0.0.1:${address.port}`;
  proxy.close = async () => {
    for (const answer of hanging.splice(0)) answer.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}
