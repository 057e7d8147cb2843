import { Agent, request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';

export interface KeepAliveAnswer {
  status: number;
  body: string;
}

/**
 * A client of one keep-alive connection at a time (node:http's agent, one socket), as a long-lived API client
 * holds one: a socket the server ends under a request fails that request (ECONNRESET, "socket hang up"). `sockets`
 * are those the answers came on.
 */
export function keepAliveClient(
  baseUrl: string,
  token: string,
): {
  send(method: string, path: string, body?: string): Promise<KeepAliveAnswer>;
  sockets: Set<Socket>;
  close(): void;
} {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sockets = new Set<Socket>();
  const send = (method: string, path: string, body?: string): Promise<KeepAliveAnswer> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { Authorization: `Bearer ${token}` };
      if (body !== undefined) {
        headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = Buffer.byteLength(body);
      }
      const call = httpRequest(`${baseUrl}${path}`, { method, agent, headers, timeout: 10_000 }, (response) => {
        sockets.add(response.socket);
        let text = '';
        response.on('data', (d: Buffer) => (text += d.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      });
      call.on('timeout', () => call.destroy(new Error(`${method} ${path}: no answer in 10 s`)));
      call.on('error', reject);
      call.end(body);
    });
  return { send, sockets, close: () => agent.destroy() };
}
