import { writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_DEFAULTS } from '../../src/service/net/outbound.js';
import { SYNC_DEFAULTS } from '../../src/service/syncs/settings.js';
import { jobWhen, jsonClient, type Json } from '../helpers/queries.js';
import { waitFor } from '../helpers/wait-for.js';
import { tempDir } from '../helpers/temp.js';
import { inMemory, type Harness } from '../helpers/transports.js';
import { lenenc, ok, packet, startFakeMysql, type FakeMysql } from '../helpers/fake-mysql.js';

/**
 * A MySQL "server" that lets anyone in and answers every statement by asking the client for a file of its own
 * (`LOAD DATA LOCAL`'s request): the classic way a hostile server reads a client's files. lake must send nothing
 * of the file, fail the statement with the generic reason, and keep serving.
 */

/** A MySQL source of the tenant's at 127.0.0.1:`port` (database `shop`, any user). */
function createSource(call: ReturnType<typeof jsonClient>, name: string, port: number): Promise<Json> {
  return call('POST', '/sources', {
    connector: 'mysql',
    name,
    config: { port, database: 'shop' },
    host: '127.0.0.1',
    user: 'anyone',
  });
}

/** Gives a source the table a tenant once saw there (`shop.orders`), as if discovery had found it. */
async function withOrdersTable(api: Harness, sourceId: string): Promise<void> {
  await api.services.sources.store.update(sourceId, {
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
}

describe('a MySQL server that asks lake for its files', () => {
  const secret = join(tempDir('lake-hostile-mysql'), 'secret.txt');
  const received: Buffer[] = [];
  /** The length of each answer to a file request: 0 is an empty file. */
  const fileAnswers: number[] = [];
  let server: FakeMysql;
  let api: Harness;

  beforeAll(async () => {
    writeFileSync(secret, 'the-server-secret-1234');
    // Each connection's statements are answered by a file request, and the client's answer to that by OK.
    const askedForFile = new WeakSet<Socket>();
    server = await startFakeMysql((socket, chunk) => {
      received.push(chunk);
      if (!askedForFile.has(socket)) {
        askedForFile.add(socket);
        socket.write(packet(1, Buffer.concat([Buffer.from([0xfb]), Buffer.from(secret)])));
      } else {
        fileAnswers.push(chunk.readUIntLE(0, 3));
        askedForFile.delete(socket);
        socket.write(ok(3));
      }
    });
    api = await inMemory.start();
  });

  afterAll(async () => {
    await api?.close();
    await server?.stop();
  });

  it('sends nothing of the file, fails with a generic reason, and keeps serving', async () => {
    const call = jsonClient(api);
    const source = await createSource(call, 'hostile', server.port);
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
  let server: FakeMysql;
  let api: Harness;

  beforeAll(async () => {
    server = await startFakeMysql(() => {});
    api = await inMemory.start({
      services: { outbound: LOCAL_DEFAULTS, syncSettings: { ...SYNC_DEFAULTS, idleTimeoutMs: 1_000 } },
    });
  });

  afterAll(async () => {
    await api?.close();
    await server?.stop();
  });

  it('fails the sync after the idle timeout, its connection closed', async () => {
    const call = jsonClient(api);
    const source = await createSource(call, 'silent', server.port);
    // Discovery found nothing (the server never answered it): the table a tenant once saw there.
    await withOrdersTable(api, source.id as string);
    const sync = await call('POST', `/sources/${source.id}/sync`, {});
    const job = await jobWhen((path) => call('GET', path), sync.id as string, undefined, 15_000);
    expect(job.status).toBe('failed');
    expect(JSON.stringify(job)).toMatch(/sent nothing for 1 s \(LAKE_SYNC_IDLE_TIMEOUT_SECONDS\)/);
    expect(
      await waitFor(
        () => server.open(),
        (n) => n === 0,
        2_000,
      ),
    ).toBe(0);
  }, 40_000);
});

/**
 * A MySQL "server" that lets anyone in and answers every statement with a result of one text column and then either
 * one row that never ends ('huge-row': packets continued in 16 MiB parts, as a row longer than 16 MiB travels) or
 * rows without end ('endless-rows', 60 KB each). It sends no more than `cap` bytes of them, so a client that buffers
 * them all cannot take the machine down (a connection at a time); `sent()` is how many its sockets took since
 * `reset()`.
 */
async function hostileResults(mode: 'huge-row' | 'endless-rows', cap: number) {
  let sent = 0;
  const fake = await startFakeMysql((socket) => {
    const column = Buffer.concat([
      ...['def', '', '', '', 'x', ''].map(lenenc),
      Buffer.from([0x0c, 0x21, 0x00, 0xff, 0xff, 0xff, 0x00, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00]),
    ]);
    socket.write(
      Buffer.concat([
        packet(1, Buffer.from([0x01])),
        packet(2, column),
        packet(3, Buffer.from([0xfe, 0x00, 0x00, 0x02, 0x00])),
      ]),
    );
    let seq = 4;
    let mine = 0;
    const part =
      mode === 'huge-row'
        ? Buffer.alloc(0xffffff, 0x78)
        : Buffer.concat([Buffer.from([0xfc, 0x60, 0xea]), Buffer.alloc(60_000, 0x78)]);
    const pump = (): void => {
      while (!socket.destroyed && mine < cap) {
        mine += part.length;
        const next = packet(seq++ & 0xff, part);
        sent += next.length;
        if (!socket.write(next)) break;
      }
    };
    socket.on('drain', pump);
    pump();
  });
  return { ...fake, sent: () => sent, reset: () => void (sent = 0) };
}

describe('a MySQL server that answers with more than lake reads', () => {
  let api: Harness;
  const servers: Awaited<ReturnType<typeof hostileResults>>[] = [];

  beforeAll(async () => {
    api = await inMemory.start({
      services: {
        outbound: LOCAL_DEFAULTS,
        syncSettings: { ...SYNC_DEFAULTS, idleTimeoutMs: 1_000, maxRecordBytes: 1 << 20 },
      },
    });
  });

  afterAll(async () => {
    await api?.close();
    for (const server of servers) await server.stop();
  });

  it('a row announced longer than the record cap ends the sync at the cap, before the driver holds it', async () => {
    // mysql2 joins a row's 16 MiB parts whole before it hands the row on: without a bound on the wire it would take
    // in the 96 MiB sent here (and gigabytes from a server that went on), then wait for the rest.
    const server = await hostileResults('huge-row', 96 << 20);
    servers.push(server);
    const call = jsonClient(api);
    const source = await createSource(call, 'huge-row', server.port);
    await withOrdersTable(api, source.id as string);
    server.reset();
    const sync = await call('POST', `/sources/${source.id}/sync`, {});
    const job = await jobWhen((path) => call('GET', path), sync.id as string, undefined, 15_000);
    expect(job.status).toBe('failed');
    expect(JSON.stringify(job)).toMatch(/larger than 1 MiB, the longest a sync takes \(LAKE_SYNC_MAX_RECORD_BYTES\)/);
    // What the sockets' buffers on both sides held when the connection was ended, no more.
    expect(server.sent()).toBeLessThan(48 << 20);
    expect(await waitFor(server.open, (n) => n === 0, 2_000)).toBe(0);
  }, 40_000);

  it("rows without end to a sync's plan statement end its connection, not its idle timeout", async () => {
    const server = await hostileResults('endless-rows', 160 << 20);
    servers.push(server);
    const call = jsonClient(api);
    const source = await createSource(call, 'endless-plan', server.port);
    await withOrdersTable(api, source.id as string);
    const sync = await call('POST', `/sources/${source.id}/sync`, {});
    const job = await jobWhen((path) => call('GET', path), sync.id as string, undefined, 15_000);
    expect(job.status).toBe('failed');
    expect(JSON.stringify(job)).toMatch(/answered a statement with more than lake reads/);
  }, 40_000);

  it('rows without end to a connection test end it at the bytes a discovery reads, not at its timeout', async () => {
    const server = await hostileResults('endless-rows', 160 << 20);
    servers.push(server);
    const call = jsonClient(api);
    const source = await createSource(call, 'endless-rows', server.port);
    server.reset();
    const started = Date.now();
    const tested = await call('POST', `/sources/${source.id}/test`);
    // Without a bound the rows filled memory up to the server's cap, and the test waited for its 10 s timeout.
    expect(tested).toMatchObject({ ok: false, reason: 'unknown' });
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(server.sent()).toBeLessThan(112 << 20);
  }, 40_000);
});
