import { createServices } from '../assembly/services.js';
import { createApp } from '../api/server/app.js';
import type { ConnectionRefusal } from '../api/server/connection-gate.js';
import { startServer } from '../api/server/server.js';
import { openHome } from '../home/home.js';
import { listenForMetrics } from './metrics-listener.js';
import { serviceOptions, type ServerSettings } from './settings.js';
import { routeStrayOutput } from './stray-output.js';

/** How long a stopping server lets requests and queries in flight finish. */
const SHUTDOWN_GRACE_MS = 10_000;

export interface LakeServer {
  /** The address it listens on. */
  url: string;
  organizationId: string;
  /** Ends event streams, stops taking requests, lets work in flight finish (10 s), then closes everything. */
  stop(): Promise<void>;
}

/**
 * Assembles and starts `lake serve` from its settings: the home, the services (queries in worker processes, the
 * background sweeps and schedules), the API app and the HTTP server, each closed in order by stop().
 */
export async function startLakeServer(
  settings: ServerSettings,
  listen: { host: string; port: number },
  log: (line: object) => void,
): Promise<LakeServer> {
  // What libraries print on their own becomes log lines too, from the start to the last close.
  const restoreOutput = routeStrayOutput(log);
  const home = await openHome(settings.homeDir, settings.home).catch((error: unknown) => {
    restoreOutput();
    throw error;
  });
  const closeHome = async (): Promise<void> => {
    await home.close();
    restoreOutput();
  };
  try {
    // prom-client is loaded only when an operator asks for metrics.
    const metrics = settings.metricsAddress
      ? (await import('../metrics/metrics.js')).prometheusMetrics({ organizationLabels: settings.metricsOrganizations })
      : undefined;
    const services = await createServices(home, { ...serviceOptions(settings), log, ...(metrics ? { metrics } : {}) });
    const scrape =
      metrics && settings.metricsAddress
        ? await listenForMetrics(metrics, settings.metricsAddress).catch(async (error: unknown) => {
            await services.close();
            throw error;
          })
        : undefined;
    if (scrape) log({ level: 'info', msg: 'metrics listening', url: scrape.url });
    services.queries.warm();
    services.startBackgroundWork();
    // Links in responses never follow a request's Host header: without --public-url they name this address.
    let listening: string | undefined;
    const publicUrl = (): string | undefined => settings.publicUrl ?? listening;
    const app = createApp(services, {
      log,
      corsOrigins: settings.corsOrigins,
      clientAddresses: settings.clientAddresses,
      publicUrl,
    });
    const connections = settings.connections && {
      limits: settings.connections,
      isProxy: (peer: string) => settings.clientAddresses.isProxy(peer),
      refused: (why: ConnectionRefusal) =>
        services.metrics.rateLimited(why === 'client' ? 'connections_per_client' : 'connections'),
    };
    const server = await startServer(app, {
      ...listen,
      log,
      publicOrigin: publicUrl,
      ...(connections ? { connections } : {}),
    }).catch(async (error: unknown) => {
      await scrape?.close();
      await services.close();
      throw error;
    });
    listening = server.url.replace('://0.0.0.0:', '://127.0.0.1:').replace('://[::]:', '://[::1]:');
    if (!settings.publicUrl && /:\/\/(0\.0\.0\.0|\[::\])/.test(server.url)) {
      log({
        level: 'warn',
        msg: 'listening on every address without --public-url: links in responses name 127.0.0.1; set --public-url to the address clients use',
      });
    }
    return {
      url: server.url,
      organizationId: home.organization.id,
      async stop() {
        // Event streams would hold the server open until they time out; end them first.
        services.stopStreams();
        await server.close();
        await scrape?.close();
        await services.close(SHUTDOWN_GRACE_MS);
        await closeHome();
      },
    };
  } catch (error) {
    await closeHome();
    throw error;
  }
}
