import { createServer, type Server, type Socket } from 'node:net';

/**
 * A fake PostgreSQL server that asks every client for its password in clear text and keeps what it is told: what a
 * member would run to harvest a stored password.
 */
export async function startPasswordHarvester(): Promise<{ port: number; received: string[]; stop: () => Promise<void> }> {
  const received: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    let buffer = Buffer.alloc(0);
    let greeted = false;
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!greeted && buffer.length >= 8) {
        const length = buffer.readInt32BE(0);
        if (buffer.length < length) return;
        buffer = buffer.subarray(length);
        greeted = true;
        // AuthenticationCleartextPassword.
        socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]));
      }
      if (greeted && buffer.length >= 5 && buffer[0] === 0x70) {
        const length = buffer.readInt32BE(1);
        if (buffer.length < 1 + length) return;
        received.push(buffer.subarray(5, length).toString('utf8').replace(/\0$/, ''));
        socket.destroy();
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    received,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

