import { join } from 'node:path';
import { createApp } from '../../src/service/api/server/app.js';
import { ClientAddresses } from '../../src/service/api/client-address.js';
import { startServer } from '../../src/service/api/server/server.js';
import { openHome, type Home, type HomeOptions } from '../../src/service/home/home.js';
import { createServices, type ServiceOptions } from '../../src/service/assembly/services.js';
import { querySettingsFromEnv } from '../../src/service/queries/settings.js';
import type { LakeServices } from '../../src/service/assembly/services.js';
import { assertMatchesContract } from './contract-check.js';
import { tempDir } from './temp.js';
import { testHomeOptions } from './test-store.js';

export interface Harness {
  home: Home;
  services: LakeServices;
  /** Every line the app and server logged, for tests that check what never reaches a log. */
  logs: object[];
  baseUrl: string;
  /** Sends a request to the API as a client would; paths are relative to baseUrl. */
  request(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
  close(): Promise<void>;
}

export interface StartOptions {
  homeDir?: string;
  /** Home settings beside the test store's (an object store's, say). */
  home?: HomeOptions;
  services?: ServiceOptions;
  /** Browser origins the app allows (LAKE_CORS_ORIGINS in lake serve). */
  corsOrigins?: string[];
  /** Proxies whose X-Forwarded-For is believed (LAKE_TRUSTED_PROXIES in lake serve). */
  trustedProxies?: string[];
}

export interface Transport {
  name: string;
  start(options?: StartOptions): Promise<Harness>;
}

/** Test defaults: queries may run long enough to observe, and a little parallelism keeps the machine responsive. */
/** The services as lake serve makes them, logging where the app logs. */
function servicesFor(home: Home, options: StartOptions, logs: object[]): Promise<LakeServices> {
  // Rate limits stay off unless a test asks for them: other suites make thousands of requests on purpose.
  return createServices(home, {
    rateLimits: false,
    log: logTo(logs),
    ...options.services,
    querySettings: { ...querySettingsFromEnv({}), threads: 2, ...options.services?.querySettings },
  });
}

// LAKE_TEST_LOG=1 prints the app's log (unexpected errors) while debugging a test.
const logTo =
  (logs: object[]) =>
  (line: object): void => {
    logs.push(line);
    if (process.env.LAKE_TEST_LOG ?? process.env.TEST_LOG) console.error(JSON.stringify(line));
  };

const defaultHomeDir = (): string => join(tempDir('lake-home'), 'home');

function requester(fetcher: (request: Request) => Promise<Response>, baseUrl: string, home: Home): Harness['request'] {
  return (path, init = {}) => {
    const { token, ...rest } = init;
    const headers = new Headers(rest.headers);
    const credential = token === undefined ? home.ownerToken : token;
    if (credential !== null) headers.set('Authorization', `Bearer ${credential}`);
    const request = new Request(new URL(path, baseUrl), { ...rest, headers });
    return fetcher(request).then(async (response) => {
      await assertMatchesContract(request, response);
      return response;
    });
  };
}

/** The same app in memory, as local mode uses it. */
export const inMemory: Transport = {
  name: 'in-memory',
  async start(options = {}) {
    const homeDir = options.homeDir ?? defaultHomeDir();
    const home = await openHome(homeDir, { ...(await testHomeOptions(homeDir)), ...options.home });
    const logs: object[] = [];
    const services = await servicesFor(home, options, logs);
    // Routed as local mode routes (a linear router); the HTTP transport below keeps lake serve's.
    const app = createApp(services, { log: logTo(logs), routing: 'one-shot', corsOrigins: options.corsOrigins });
    const baseUrl = 'http://local.lake';
    return {
      home,
      services,
      logs,
      baseUrl,
      request: requester(async (r) => app.fetch(r), baseUrl, home),
      async close() {
        await services.close();
        await home.close();
      },
    };
  },
};

/** The same app behind a real HTTP server on 127.0.0.1, as `lake serve` runs it. */
export const overHttp: Transport = {
  name: 'http',
  async start(options = {}) {
    const homeDir = options.homeDir ?? defaultHomeDir();
    const home = await openHome(homeDir, { ...(await testHomeOptions(homeDir)), ...options.home });
    const logs: object[] = [];
    const services = await servicesFor(home, options, logs);
    const clientAddresses = new ClientAddresses(options.trustedProxies ?? []);
    const server = await startServer(
      createApp(services, { log: logTo(logs), corsOrigins: options.corsOrigins, clientAddresses }),
      { host: '127.0.0.1', port: 0, log: logTo(logs) },
    );
    return {
      home,
      services,
      logs,
      baseUrl: server.url,
      request: requester((r) => fetch(r), server.url, home),
      async close() {
        await server.close(1000);
        await services.close();
        await home.close();
      },
    };
  },
};

export const TRANSPORTS: readonly Transport[] = [inMemory, overHttp];
