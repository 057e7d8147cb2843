import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { writeSelfSigned } from './certificates.js';

/**
 * A fake PostgreSQL server that asks every client for its password in clear text and keeps what it is told: what a
 * member would run to harvest a stored password.
 */
export async function startPasswordHarvester(): Promise<{
  port: number;
  received: string[];
  stop: () => Promise<void>;
}> {
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

/**
 * What a hostile PostgreSQL does once a sync's COPY starts ('hang', 'endless-record', 'rows'), or before it: the
 * sync's look at a table's columns gets one row announced 1.5 GiB long, of which it sends 96 MiB ('huge-message'), or
 * 64 MiB of rows that never end ('endless-rows'); discovery's list of tables gets rows without end ('endless-catalog').
 */
export type CopyBehaviour = 'hang' | 'endless-record' | 'huge-message' | 'endless-rows' | 'endless-catalog' | 'rows';

export interface FakePostgres {
  port: number;
  /** Connections open now (a sync that ended leaves none). */
  open(): number;
  /** Cancel requests received. */
  cancels(): number;
  /** COPY statements started. */
  copies(): number;
  /** Whether a statement it never answers (`hangOn`) has arrived. */
  hung(): boolean;
  /** Bytes of its huge message or endless rows it has handed to its sockets (what a client's kernel and driver took in). */
  hugeBytes(): number;
  stop(): Promise<void>;
}

const TEXT = 25;
const BOOL = 16;
const INT4 = 23;
const INT8 = 20;
const TEXT_ARRAY = 1009;

function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}
const cstring = (text: string): Buffer => Buffer.from(`${text}\0`, 'utf8');
const int16 = (n: number): Buffer => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const int32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

type Column = [name: string, oid: number];
type Row = (string | null)[];

function rowDescription(columns: readonly Column[]): Buffer {
  return message(
    'T',
    Buffer.concat([
      int16(columns.length),
      ...columns.map(([name, oid]) =>
        Buffer.concat([cstring(name), int32(0), int16(0), int32(oid), int16(-1), int32(-1), int16(0)]),
      ),
    ]),
  );
}
function dataRow(row: Row): Buffer {
  return message(
    'D',
    Buffer.concat([
      int16(row.length),
      ...row.map((v) => (v === null ? int32(-1) : Buffer.concat([int32(Buffer.byteLength(v)), Buffer.from(v)]))),
    ]),
  );
}
const complete = (tag: string): Buffer => message('C', cstring(tag));
const ready = (): Buffer => message('Z', Buffer.from('I'));
const failure = (code: string, text: string): Buffer =>
  message(
    'E',
    Buffer.concat([
      Buffer.from('S'),
      cstring('ERROR'),
      Buffer.from('C'),
      cstring(code),
      Buffer.from('M'),
      cstring(text),
      Buffer.from([0]),
    ]),
  );

/** The answer to one statement of a sync, by what it asks (the catalog queries lake runs, in their shapes). */
/** The text parameters of a Bind message (node-postgres sends them as text). */
function bindParameters(body: Buffer): string[] {
  let at = body.indexOf(0) + 1;
  at = body.indexOf(0, at) + 1;
  const formats = body.readInt16BE(at);
  at += 2 + 2 * formats;
  const count = body.readInt16BE(at);
  at += 2;
  const values: string[] = [];
  for (let i = 0; i < count; i++) {
    const length = body.readInt32BE(at);
    at += 4;
    values.push(length < 0 ? '' : body.subarray(at, at + length).toString('utf8'));
    at += Math.max(0, length);
  }
  return values;
}

function answer(
  sql: string,
  names: readonly string[],
  columns: number,
  parameters: readonly string[] = [],
): { columns: Column[]; rows: Row[] } | { error: Buffer } | { tag: string } {
  const q = sql.toLowerCase();
  // Discovery (the catalog queries of src/service/connectors/postgres.ts): table oids are 1000 + their index.
  if (q.includes('column_count')) {
    return {
      columns: [
        ['schema', TEXT],
        ['table', TEXT],
        ['oid', INT8],
        ['estimated_rows', INT8],
        ['analyzed', BOOL],
        ['column_count', INT8],
      ],
      rows: names.map((table, i) => ['public', table, String(1000 + i), '0', 't', String(columns)]),
    };
  }
  if (q.includes('format_type') && q.includes('attrelid = any')) {
    const wanted = (parameters[0] ?? '').replace(/[{}"]/g, '').split(',').filter(Boolean);
    return {
      columns: [
        ['oid', INT8],
        ['column', TEXT],
        ['type', TEXT],
        ['nullable', BOOL],
      ],
      rows: wanted.flatMap((oid) => Array.from({ length: columns }, (_, c): Row => [oid, `c${c}`, 'text', 't'])),
    };
  }
  if (q.includes('indisprimary'))
    return {
      columns: [
        ['oid', INT8],
        ['column', TEXT],
      ],
      rows: [],
    };
  if (q.includes('pg_control_system'))
    return { error: failure('42501', 'permission denied for function pg_control_system') };
  if (q.includes('server_version_num'))
    return {
      columns: [
        ['s', INT4],
        ['v', INT4],
      ],
      rows: [['2', '150000']],
    };
  if (q.includes('enum_labels'))
    return {
      columns: [
        ['name', TEXT],
        ['type', TEXT],
        ['enum_labels', TEXT_ARRAY],
        ['not_null', BOOL],
      ],
      rows: [['c0', 'text', null, 'f']],
    };
  if (q.includes('pg_relation_size'))
    return {
      columns: [
        ['kind', TEXT],
        ['bytes', INT8],
        ['block_size', INT4],
      ],
      rows: [['r', '0', '8192']],
    };
  if (q.includes('has_table_privilege')) return { columns: [['ok', BOOL]], rows: [['t']] };
  if (q.startsWith('select')) return { columns: [['x', TEXT]], rows: [] };
  return { tag: q.split(/\s+/)[0]?.toUpperCase() ?? 'OK' };
}

/**
 * A PostgreSQL that a hostile tenant runs: it answers lake's catalog queries like a server with `tables` tables of
 * `columns` text columns each (trust auth; or tables named `names`), then, once a COPY starts, either never sends
 * another byte ('hang'), sends one record that never ends ('endless-record', as fast as it is read), or sends two
 * rows and ends ('rows'). 'endless-catalog' answers discovery's list of tables with rows without end (up to 160 MiB).
 * It ignores cancel requests (and counts them), as a hostile server would. With `tls` it takes a client's SSLRequest
 * and speaks over TLS with a self-signed certificate of its own.
 */
export async function startFakePostgres(
  behaviour: CopyBehaviour,
  shape: { tables?: number; columns?: number; names?: string[]; hangOn?: RegExp; tls?: boolean } = {},
): Promise<FakePostgres> {
  const certificate = shape.tls ? selfSigned() : undefined;
  const sockets = new Set<Socket>();
  let cancels = 0;
  let copies = 0;
  let hugeBytes = 0;
  let hungOnce = false;
  const names = shape.names ?? Array.from({ length: shape.tables ?? 1 }, (_, i) => `t${i}`);
  const columns = shape.columns ?? 1;
  const server: Server = createServer((raw) => {
    sockets.add(raw);
    raw.on('close', () => sockets.delete(raw));
    raw.on('error', () => {});
    serve(raw);
  });
  /** Speaks the protocol on `socket`: the client's own, or the TLS session over it. */
  const serve = (socket: Socket): void => {
    let buffer = Buffer.alloc(0);
    let started = false;
    let pending = '';
    let parameters: string[] = [];
    let hung = false;
    const copy = (): void => {
      copies++;
      socket.write(message('H', Buffer.concat([Buffer.from([0]), int16(1), int16(0)])));
      if (behaviour === 'hang') return;
      if (behaviour === 'rows') {
        socket.write(
          Buffer.concat([
            message('d', Buffer.from('one\n')),
            message('d', Buffer.from('two\n')),
            message('c', Buffer.alloc(0)),
            complete('COPY 2'),
            ready(),
          ]),
        );
        return;
      }
      const chunk = message('d', Buffer.alloc(64 * 1024, 0x78));
      const pump = (): void => {
        while (!socket.destroyed && socket.write(chunk));
      };
      socket.on('drain', pump);
      pump();
    };
    // One DataRow announced 1.5 GiB long, sent no further than 96 MiB (so a client that buffers it whole cannot take
    // the machine down while it waits for the rest).
    const hugeRow = (): void => {
      const header = Buffer.alloc(5);
      header.write('D', 0, 'latin1');
      header.writeInt32BE(1536 << 20, 1);
      socket.write(header);
      const filler = Buffer.alloc(64 * 1024, 0x78);
      const pump = (): void => {
        while (!socket.destroyed && hugeBytes < 96 << 20) {
          hugeBytes += filler.length;
          if (!socket.write(filler)) break;
        }
      };
      socket.on('drain', pump);
      pump();
    };
    // Rows of the columns statement's shape, 64 KiB each, without end (up to 64 MiB).
    const endlessRows = (): void => {
      const row = dataRow(['c0', 'x'.repeat(64 * 1024), null, 'f']);
      let mine = 0;
      const pump = (): void => {
        while (!socket.destroyed && mine < 64 << 20) {
          mine += row.length;
          hugeBytes += row.length;
          if (!socket.write(row)) break;
        }
      };
      socket.on('drain', pump);
      pump();
    };
    // Discovery's list of tables, each row naming a table of 64 KiB, without end (up to 160 MiB).
    const endlessCatalog = (described: boolean): void => {
      const shapeOf = answer('select column_count', names, columns);
      if (described && 'columns' in shapeOf) socket.write(rowDescription(shapeOf.columns));
      const row = dataRow(['public', 'x'.repeat(64 * 1024), '1000', '0', 't', '1']);
      const pump = (): void => {
        while (!socket.destroyed && hugeBytes < 160 << 20) {
          hugeBytes += row.length;
          if (!socket.write(row)) break;
        }
      };
      socket.on('drain', pump);
      pump();
    };
    const respond = (
      sql: string,
      extended: 'describe' | 'execute' | 'simple',
      values: readonly string[] = [],
    ): void => {
      // A statement it never answers (a destination that takes an INSERT and says nothing more).
      if (shape.hangOn?.test(sql)) {
        hung = true;
        hungOnce = true;
        return;
      }
      if (/^\s*copy/i.test(sql)) {
        if (extended !== 'describe') copy();
        return;
      }
      // The sync's first look at a table's columns (discovery has had its answers).
      // Its answer never ends, so nothing after it (the Sync's ReadyForQuery) is answered.
      if (behaviour === 'huge-message' && extended === 'execute' && sql.includes('enum_labels')) {
        hung = true;
        hugeRow();
        return;
      }
      if (behaviour === 'endless-catalog' && extended !== 'describe' && sql.includes('column_count')) {
        hung = true;
        endlessCatalog(extended === 'simple');
        return;
      }
      if (behaviour === 'endless-rows' && extended === 'execute' && sql.includes('enum_labels')) {
        hung = true;
        endlessRows();
        return;
      }
      const result = answer(sql, names, columns, values);
      if ('error' in result) {
        if (extended !== 'describe') socket.write(result.error);
        return;
      }
      if ('tag' in result) {
        if (extended === 'describe') socket.write(message('n', Buffer.alloc(0)));
        else socket.write(complete(result.tag));
        return;
      }
      if (extended !== 'execute') socket.write(rowDescription(result.columns));
      if (extended === 'describe') return;
      for (const row of result.rows) socket.write(dataRow(row));
      socket.write(complete(`SELECT ${result.rows.length}`));
    };
    const receive = (data: Buffer): void => {
      buffer = Buffer.concat([buffer, data]);
      if (!started) {
        if (buffer.length < 8) return;
        const length = buffer.readInt32BE(0);
        if (buffer.length < length) return;
        const code = buffer.readInt32BE(4);
        buffer = buffer.subarray(length);
        if (code === 80877102) {
          cancels++;
          socket.destroy();
          return;
        }
        if (code === 80877103) {
          // An SSLRequest: 'S' and the handshake with a certificate, or 'N' and the protocol in the clear.
          if (!certificate) {
            socket.write('N');
            return;
          }
          socket.removeListener('data', receive);
          socket.write('S');
          const secure = new TLSSocket(socket, { isServer: true, ...certificate });
          secure.on('error', () => {});
          serve(secure);
          return;
        }
        started = true;
        const parameters = [
          ['server_version', '15.0'],
          ['client_encoding', 'UTF8'],
          ['standard_conforming_strings', 'on'],
          ['integer_datetimes', 'on'],
          ['DateStyle', 'ISO, MDY'],
        ];
        socket.write(
          Buffer.concat([
            message('R', int32(0)),
            ...parameters.map(([k, v]) => message('S', Buffer.concat([cstring(k as string), cstring(v as string)]))),
            message('K', Buffer.concat([int32(4242), int32(777)])),
            ready(),
          ]),
        );
      }
      while (buffer.length >= 5 && !hung) {
        const type = String.fromCharCode(buffer[0] as number);
        const length = buffer.readInt32BE(1);
        if (buffer.length < 1 + length) return;
        const body = buffer.subarray(5, 1 + length);
        buffer = buffer.subarray(1 + length);
        if (type === 'Q') {
          const sql = body.toString('utf8').replace(/\0$/, '');
          respond(sql, 'simple');
          if (!/^\s*copy/i.test(sql)) socket.write(ready());
        } else if (type === 'P') {
          const name = body.indexOf(0);
          pending = body.subarray(name + 1, body.indexOf(0, name + 1)).toString('utf8');
          socket.write(message('1', Buffer.alloc(0)));
        } else if (type === 'B') {
          parameters = bindParameters(body);
          socket.write(message('2', Buffer.alloc(0)));
        } else if (type === 'D') respond(pending, 'describe', parameters);
        else if (type === 'E') respond(pending, 'execute', parameters);
        else if (type === 'S') socket.write(ready());
        else if (type === 'X') socket.end();
      }
    };
    socket.on('data', receive);
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    open: () => sockets.size,
    cancels: () => cancels,
    copies: () => copies,
    hung: () => hungOnce,
    hugeBytes: () => hugeBytes,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A self-signed certificate and its key, made for one fake server. */
function selfSigned(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'lake-fake-tls-'));
  try {
    writeSelfSigned(join(dir, 'key.pem'), join(dir, 'cert.pem'));
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
