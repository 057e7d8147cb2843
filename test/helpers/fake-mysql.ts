import { createServer, type Socket } from 'node:net';

/**
 * The pieces of the MySQL wire protocol a test's own "server" speaks: a packet, the greeting of a server that lets
 * anyone in (mysql_native_password, no TLS), an OK packet and a length-encoded string.
 */

export function packet(seq: number, body: Buffer): Buffer {
  const header = Buffer.alloc(4);
  header.writeUIntLE(body.length, 0, 3);
  header[3] = seq;
  return Buffer.concat([header, body]);
}

export function greeting(): Buffer {
  const capabilities = 0x0001 | 0x0008 | 0x0080 | 0x0200 | 0x2000 | 0x8000 | 0x80000;
  const fixed = Buffer.alloc(4 + 9 + 2 + 1 + 2 + 2 + 1 + 10);
  let at = 0;
  at = fixed.writeUInt32LE(7, at);
  at += fixed.write('abcdefgh', at) + 1;
  at = fixed.writeUInt16LE(capabilities & 0xffff, at);
  at = fixed.writeUInt8(0x2d, at);
  at = fixed.writeUInt16LE(0x0002, at);
  at = fixed.writeUInt16LE(capabilities >>> 16, at);
  fixed.writeUInt8(21, at);
  return packet(
    0,
    Buffer.concat([
      Buffer.from([0x0a]),
      Buffer.from('10.11.0-hostile\0'),
      fixed,
      Buffer.from('ijklmnopqrst\0'),
      Buffer.from('mysql_native_password\0'),
    ]),
  );
}

export const ok = (seq: number): Buffer => packet(seq, Buffer.from([0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00]));

/** A length-encoded string of the MySQL protocol (shorter than 251 bytes). */
export const lenenc = (text: string): Buffer =>
  Buffer.concat([Buffer.from([Buffer.byteLength(text)]), Buffer.from(text)]);

export interface FakeMysql {
  port: number;
  /** How many client connections are open. */
  open(): number;
  stop(): Promise<void>;
}

/**
 * A MySQL "server" on 127.0.0.1 that lets anyone in (its greeting, then OK to whatever the client answers) and
 * gives every later chunk the client sends to `answer`, with the socket to answer on.
 */
export async function startFakeMysql(answer: (socket: Socket, chunk: Buffer) => void): Promise<FakeMysql> {
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => {});
    socket.write(greeting());
    let authenticated = false;
    socket.on('data', (chunk: Buffer) => {
      if (authenticated) return answer(socket, chunk);
      authenticated = true;
      socket.write(ok(2));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    open: () => open.size,
    stop: async () => {
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
