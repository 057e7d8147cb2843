import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { LakeApp } from './app.js';
import { ERROR_CATALOGUE } from '../../../contract/errors.js';
import { newRequestId } from '../middleware/request-context.js';

export interface ServerOptions {
  host: string;
  port: number;
  /** One structured line per request and per lifecycle event. */
  log: (line: object) => void;
  /** The origin doc_url links name (--public-url, else this server's address once known). */
  publicOrigin?: () => string | undefined;
}

/** A Host header: a name or an address, with an optional port. */
const VALID_HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}))(?::\d{1,5})?$/;

/**
 * An error in the spec's envelope, written where the app cannot answer: the request could not be parsed, its
 * headers were too large, or its Host header names no host. It has a Request-Id like every other answer.
 */
function envelope(
  code: 'malformed_request' | 'headers_too_large',
  message: string,
  origin: string,
): { status: number; requestId: string; body: string } {
  const requestId = newRequestId();
  const definition = ERROR_CATALOGUE[code];
  return {
    status: definition.status,
    requestId,
    body: JSON.stringify({
      error: { type: definition.type, code, message, doc_url: `${origin}/errors/${code}`, request_id: requestId },
    }),
  };
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 431: 'Request Header Fields Too Large' };

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
  // The node adapter's second argument carries the socket: without it every client would share one address.
  const fetch = async (request: Request, env: unknown): Promise<Response> => {
    const started = performance.now();
    const response = await app.fetch(request, env);
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

  let url = '';
  const origin = (): string => options.publicOrigin?.() ?? url;
  const logError = (status: number, requestId: string, reason: string): void =>
    options.log({
      level: 'info',
      msg: 'request',
      method: null,
      path: null,
      status,
      ms: 0,
      request_id: requestId,
      reason,
    });
  const listener = getRequestListener(fetch);
  const server = createServer((req, res: ServerResponse) => {
    if (!VALID_HOST.test(req.headers.host ?? '')) {
      const answer = envelope(
        'malformed_request',
        'The Host header does not name a host (name or address, optional port).',
        origin(),
      );
      res.writeHead(answer.status, {
        'Content-Type': 'application/json',
        'Request-Id': answer.requestId,
        'Content-Length': Buffer.byteLength(answer.body),
        Connection: 'close',
      });
      res.end(answer.body);
      logError(answer.status, answer.requestId, 'invalid host header');
      return;
    }
    void listener(req, res);
  });
  // What Node's parser refuses never reaches the app: answered here, in the envelope, instead of a bare status line.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const answer = tooLarge
      ? envelope('headers_too_large', 'The request headers are too large (16 KB at most).', origin())
      : envelope('malformed_request', 'The request could not be parsed as HTTP/1.1.', origin());
    socket.end(
      `HTTP/1.1 ${answer.status} ${REASONS[answer.status] ?? 'Error'}\r\nContent-Type: application/json\r\nRequest-Id: ${answer.requestId}\r\nContent-Length: ${Buffer.byteLength(answer.body)}\r\nConnection: close\r\n\r\n${answer.body}`,
    );
    logError(answer.status, answer.requestId, tooLarge ? 'headers too large' : 'unparsable request');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  url = `http://${host}:${address.port}`;

  let closing: Promise<void> | undefined;
  const close = (graceMs = 10_000): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        server.closeAllConnections();
      }, graceMs);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    });
    return closing;
  };
  return { url, close };
}
