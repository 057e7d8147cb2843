import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { LakeApp } from './app.js';

export interface ServerOptions {
  host: string;
  port: number;
  /** One structured line per request and per lifecycle event. */
  log: (line: object) => void;
}

export interface RunningServer {
  url: string;
  /** Stops taking connections, lets requests in flight finish (up to graceMs), then resolves. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Serves the app over HTTP. The request log names method, path (never the query string, which can hold signed-URL
 * signatures), status, duration and request id; headers and bodies, where credentials live, are never logged.
 */
export async function startServer(app: LakeApp, options: ServerOptions): Promise<RunningServer> {
  const fetch = async (request: Request): Promise<Response> => {
    const started = performance.now();
    const response = await app.fetch(request);
    options.log({
      level: 'info',
      msg: 'request',
      method: request.method,
      path: new URL(request.url).pathname,
      status: response.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      request_id: response.headers.get('Request-Id'),
    });
    return response;
  };

  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve({ fetch, hostname: options.host, port: options.port }, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;

  let closing: Promise<void> | undefined;
  const close = (graceMs = 10_000): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        if ('closeAllConnections' in server) server.closeAllConnections();
      }, graceMs);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      if ('closeIdleConnections' in server) server.closeIdleConnections();
    });
    return closing;
  };
  return { url, close };
}
