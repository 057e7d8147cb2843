import { connect, createServer, type Socket } from 'node:net';

export interface SlowLink {
  /** The port on 127.0.0.1 that reaches the target through the link. */
  port: number;
  close(): Promise<void>;
}

/**
 * A TCP link to 127.0.0.1:`targetPort` that holds every chunk `delayMs` before passing it on, each way, in order:
 * a source across a wide-area network, where what costs is the number of round trips a piece of work makes.
 */
export function startSlowLink(targetPort: number, delayMs: number): Promise<SlowLink> {
  const sockets = new Set<Socket>();
  const forward = (from: Socket, to: Socket): void => {
    from.on('data', (chunk: Buffer) => {
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk);
      }, delayMs);
    });
    from.on('end', () => setTimeout(() => to.end(), delayMs));
    from.on('error', () => to.destroy());
    from.on('close', () => setTimeout(() => to.destroy(), delayMs));
  };
  const server = createServer((client) => {
    const target = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(target);
    client.on('close', () => sockets.delete(client));
    target.on('close', () => sockets.delete(target));
    forward(client, target);
    forward(target, client);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        port: (server.address() as { port: number }).port,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
