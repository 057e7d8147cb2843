import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HEADERS_TIMEOUT_MS, TIMEOUT_CHECK_MS } from '../api/server/server.js';
import type { LakeMetrics } from '../metrics/metrics.js';

/**
 * Prometheus's scrape address (LAKE_METRICS_ADDR): GET /metrics and nothing else, apart from the API, so it can be
 * bound where only the monitoring network reaches, and no API credential is ever given to a scraper.
 */
/** Scrapers are few: more connections than this are closed as they come, so they cannot take the server's descriptors. */
export const METRICS_MAX_CONNECTIONS = 32;

export async function listenForMetrics(
  metrics: LakeMetrics,
  address: { host: string; port: number },
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(
    { headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_MS },
    (request, response) => {
      if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
        response.writeHead(404, { 'Content-Type': 'text/plain' }).end('Only GET /metrics is served here.\n');
        return;
      }
      metrics.render().then(
        ({ text, contentType }) => response.writeHead(200, { 'Content-Type': contentType }).end(text),
        () => response.writeHead(500, { 'Content-Type': 'text/plain' }).end('The metrics could not be read.\n'),
      );
    },
  );
  server.maxConnections = METRICS_MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
