import { writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_DEFAULTS } from '../../src/service/net/outbound.js';
import { SYNC_DEFAULTS } from '../../src/service/syncs/settings.js';
import { jobWhen, jsonClient, type Json } from '../helpers/queries.js';
import { waitFor } from '../helpers/wait-for.js';
import { tempDir } from '../helpers/temp.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * A MySQL "server" that lets anyone in and answers every statement by asking the client for a file of its own
 * (`LOAD DATA LOCAL`'s request): the classic way a hostile server reads a client's files. lake must send nothing
 * of the file, fail the statement with the generic reason, and keep serving.
 */
function packet(seq: number, body: Buffer): Buffer {
  const header = Buffer.alloc(4);
  header.writeUIntLE(body.length, 0, 3);
  header[3] = seq;
  return Buffer.concat([header, body]);
}

function greeting(): Buffer {
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

const ok = (seq: number): Buffer => packet(seq, Buffer.from([0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00]));

describe('a MySQL server that asks lake for its files', () => {
  const secret = join(tempDir('lake-hostile-mysql'), 'secret.txt');
  const received: Buffer[] = [];
  /** The length of each answer to a file request: 0 is an empty file. */
  const fileAnswers: number[] = [];
  let server: Server;
  let port = 0;
  let api: Harness;

  beforeAll(async () => {
    writeFileSync(secret, 'the-server-secret-1234');
    server = createServer((socket: Socket) => {
      let stage: 'auth' | 'command' | 'file' = 'auth';
      socket.on('error', () => {});
      socket.write(greeting());
      socket.on('data', (chunk: Buffer) => {
        received.push(chunk);
        if (stage === 'auth') {
          stage = 'command';
          socket.write(ok(2));
        } else if (stage === 'command') {
          stage = 'file';
          socket.write(packet(1, Buffer.concat([Buffer.from([0xfb]), Buffer.from(secret)])));
        } else {
          fileAnswers.push(chunk.readUIntLE(0, 3));
          stage = 'command';
          socket.write(ok(3));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    api = await inMemory.start();
  });

  afterAll(async () => {
    await api?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('sends nothing of the file, fails with a generic reason, and keeps serving', async () => {
    const call = jsonClient(api);
    const source = await call('POST', '/sources', {
      connector: 'mysql',
      name: 'hostile',
      config: { port, database: 'shop' },
      host: '127.0.0.1',
      user: 'anyone',
    });
    const tested = await call('POST', `/sources/${source.id}/test`);
    expect(tested).toMatchObject({ ok: false, reason: 'unknown' });
    const sent = Buffer.concat(received).toString('latin1');
    expect(sent).not.toContain('the-server-secret');
    // The request reached the client, which answered it with an empty file.
    expect(fileAnswers.length).toBeGreaterThan(0);
    expect(fileAnswers.every((length) => length === 0)).toBe(true);
    expect((await call('GET', '/sources')).data.map((s: Json) => s.name)).toContain('hostile');
  });
});

describe('a MySQL server that lets lake in and then says nothing', () => {
  let server: Server;
  let port = 0;
  let api: Harness;
  const open = new Set<Socket>();

  beforeAll(async () => {
    server = createServer((socket: Socket) => {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => {});
      socket.write(greeting());
      let authenticated = false;
      socket.on('data', () => {
        if (authenticated) return;
        authenticated = true;
        socket.write(ok(2));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    api = await inMemory.start({
      services: { outbound: LOCAL_DEFAULTS, syncSettings: { ...SYNC_DEFAULTS, idleTimeoutMs: 1_000 } },
    });
  });

  afterAll(async () => {
    await api?.close();
    for (const socket of open) socket.destroy();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('fails the sync after the idle timeout, its connection closed', async () => {
    const call = jsonClient(api);
    const source = await call('POST', '/sources', {
      connector: 'mysql',
      name: 'silent',
      config: { port, database: 'shop' },
      host: '127.0.0.1',
      user: 'anyone',
    });
    // Discovery found nothing (the server never answered it): the table a tenant once saw there.
    await api.services.sources.store.update(source.id as string, {
      tables: [
        {
          schema: 'shop',
          name: 'orders',
          columns: [{ name: 'id', type: 'int(11)', nullable: false }],
          primaryKey: ['id'],
          estimatedRows: 1,
          enabled: true,
          mode: 'full',
          cursorColumn: null,
        },
      ],
    });
    const sync = await call('POST', `/sources/${source.id}/sync`, {});
    const job = await jobWhen((path) => call('GET', path), sync.id as string, undefined, 15_000);
    expect(job.status).toBe('failed');
    expect(JSON.stringify(job)).toMatch(/sent nothing for 1 s \(LAKE_SYNC_IDLE_TIMEOUT_SECONDS\)/);
    expect(
      await waitFor(
        () => open.size,
        (n) => n === 0,
        2_000,
      ),
    ).toBe(0);
  }, 40_000);
});
