import { join } from 'node:path';
import { createApp } from '../../src/service/api/app.js';
import { startServer } from '../../src/service/api/server.js';
import { openHome, type Home } from '../../src/service/home/home.js';
import { createServices } from '../../src/service/services.js';
import { tempDir } from './temp.js';

export interface Harness {
  home: Home;
  baseUrl: string;
  /** Sends a request to the API as a client would; paths are relative to baseUrl. */
  request(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
  close(): Promise<void>;
}

export interface Transport {
  name: string;
  start(homeDir?: string): Promise<Harness>;
}

function requester(fetcher: (request: Request) => Promise<Response>, baseUrl: string, home: Home): Harness['request'] {
  return (path, init = {}) => {
    const { token, ...rest } = init;
    const headers = new Headers(rest.headers);
    const credential = token === undefined ? home.ownerToken : token;
    if (credential !== null) headers.set('Authorization', `Bearer ${credential}`);
    return fetcher(new Request(new URL(path, baseUrl), { ...rest, headers }));
  };
}

/** The same app in memory, as local mode uses it. */
export const inMemory: Transport = {
  name: 'in-memory',
  async start(homeDir = join(tempDir('lake-home'), 'home')) {
    const home = openHome(homeDir);
    const app = createApp(createServices(home));
    const baseUrl = 'http://local.lake';
    return {
      home,
      baseUrl,
      request: requester(async (r) => app.fetch(r), baseUrl, home),
      async close() {
        home.close();
      },
    };
  },
};

/** The same app behind a real HTTP server on 127.0.0.1, as `lake serve` runs it. */
export const overHttp: Transport = {
  name: 'http',
  async start(homeDir = join(tempDir('lake-home'), 'home')) {
    const home = openHome(homeDir);
    const logs: object[] = [];
    const server = await startServer(createApp(createServices(home)), { host: '127.0.0.1', port: 0, log: (l) => logs.push(l) });
    return {
      home,
      baseUrl: server.url,
      request: requester((r) => fetch(r), server.url, home),
      async close() {
        await server.close(1000);
        home.close();
      },
    };
  },
};

export const TRANSPORTS: readonly Transport[] = [inMemory, overHttp];
