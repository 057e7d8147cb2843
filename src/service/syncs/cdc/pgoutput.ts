/**
 * PostgreSQL's built-in logical decoding output (`pgoutput`, protocol version 1), one message at a time, as
 * `pg_logical_slot_peek_binary_changes` returns them. Values arrive as each type's text output, the form
 * `COPY … FROM` takes back exactly; a TOASTed value an update left alone arrives as "unchanged", without its value.
 * The format: PostgreSQL's "Logical Replication Message Formats" (protocol.sgml).
 */

/** One column's value: its text, NULL, or unchanged (a TOASTed value the update did not touch). */
export type TupleValue = string | null | typeof UNCHANGED;
export const UNCHANGED: unique symbol = Symbol('unchanged TOAST value');

export interface RelationColumn {
  name: string;
  /** Part of the replica identity (the primary key, by default). */
  key: boolean;
  typeOid: number;
  typeModifier: number;
}

export type PgoutputMessage =
  | { kind: 'begin'; finalLsn: bigint; xid: number }
  | { kind: 'commit'; commitLsn: bigint; endLsn: bigint }
  | {
      kind: 'relation';
      relationId: number;
      schema: string;
      name: string;
      /** d (default: primary key), n (nothing), f (full), i (an index). */
      replicaIdentity: string;
      columns: RelationColumn[];
    }
  | { kind: 'insert'; relationId: number; row: TupleValue[] }
  | { kind: 'update'; relationId: number; key: TupleValue[] | null; row: TupleValue[] }
  | { kind: 'delete'; relationId: number; key: TupleValue[] }
  | { kind: 'truncate'; relationIds: number[] }
  /** Messages a sync has no use for: types, origins. */
  | { kind: 'other' };

/** Reads one pgoutput message; throws on one it cannot read whole (a corrupt or foreign stream). */
export function decodePgoutput(data: Buffer): PgoutputMessage {
  const reader = new MessageReader(data);
  const tag = String.fromCharCode(reader.byte());
  switch (tag) {
    case 'B': {
      const finalLsn = reader.uint64();
      reader.uint64(); // commit time
      return { kind: 'begin', finalLsn, xid: reader.uint32() };
    }
    case 'C': {
      reader.byte(); // flags
      const commitLsn = reader.uint64();
      const endLsn = reader.uint64();
      return { kind: 'commit', commitLsn, endLsn };
    }
    case 'R': {
      const relationId = reader.uint32();
      const schema = reader.string();
      const name = reader.string();
      const replicaIdentity = String.fromCharCode(reader.byte());
      const count = reader.uint16();
      const columns: RelationColumn[] = [];
      for (let i = 0; i < count; i++) {
        const flags = reader.byte();
        columns.push({
          key: (flags & 1) === 1,
          name: reader.string(),
          typeOid: reader.uint32(),
          typeModifier: reader.int32(),
        });
      }
      return { kind: 'relation', relationId, schema, name, replicaIdentity, columns };
    }
    case 'I': {
      const relationId = reader.uint32();
      reader.expect('N');
      return { kind: 'insert', relationId, row: reader.tuple() };
    }
    case 'U': {
      const relationId = reader.uint32();
      let key: TupleValue[] | null = null;
      let marker = String.fromCharCode(reader.byte());
      // The old key (K: the replica identity changed) or the whole old row (O: REPLICA IDENTITY FULL).
      if (marker === 'K' || marker === 'O') {
        key = reader.tuple();
        marker = String.fromCharCode(reader.byte());
      }
      if (marker !== 'N') throw new Error(`pgoutput: an update without its new row (${marker})`);
      return { kind: 'update', relationId, key, row: reader.tuple() };
    }
    case 'D': {
      const relationId = reader.uint32();
      const marker = String.fromCharCode(reader.byte());
      if (marker !== 'K' && marker !== 'O') throw new Error(`pgoutput: a delete without its key (${marker})`);
      return { kind: 'delete', relationId, key: reader.tuple() };
    }
    case 'T': {
      const count = reader.uint32();
      reader.byte(); // options: CASCADE, RESTART IDENTITY
      const relationIds: number[] = [];
      for (let i = 0; i < count; i++) relationIds.push(reader.uint32());
      return { kind: 'truncate', relationIds };
    }
    case 'Y':
    case 'O':
    case 'M':
      return { kind: 'other' };
    default:
      throw new Error(`pgoutput: an unknown message '${tag}'`);
  }
}

/** Reads big-endian fields off a message, refusing to read past its end. */
class MessageReader {
  private offset = 0;

  constructor(private readonly data: Buffer) {}

  private need(bytes: number): void {
    if (this.offset + bytes > this.data.length) throw new Error('pgoutput: a message ends before its fields do');
  }

  byte(): number {
    this.need(1);
    return this.data.readUInt8(this.offset++);
  }

  uint16(): number {
    this.need(2);
    const value = this.data.readUInt16BE(this.offset);
    this.offset += 2;
    return value;
  }

  uint32(): number {
    this.need(4);
    const value = this.data.readUInt32BE(this.offset);
    this.offset += 4;
    return value;
  }

  int32(): number {
    this.need(4);
    const value = this.data.readInt32BE(this.offset);
    this.offset += 4;
    return value;
  }

  uint64(): bigint {
    this.need(8);
    const value = this.data.readBigUInt64BE(this.offset);
    this.offset += 8;
    return value;
  }

  string(): string {
    const end = this.data.indexOf(0, this.offset);
    if (end < 0) throw new Error('pgoutput: a name without its end');
    const value = this.data.toString('utf8', this.offset, end);
    this.offset = end + 1;
    return value;
  }

  expect(marker: string): void {
    const found = String.fromCharCode(this.byte());
    if (found !== marker) throw new Error(`pgoutput: expected '${marker}', found '${found}'`);
  }

  tuple(): TupleValue[] {
    const count = this.uint16();
    const values: TupleValue[] = [];
    for (let i = 0; i < count; i++) {
      const kind = String.fromCharCode(this.byte());
      if (kind === 'n') values.push(null);
      else if (kind === 'u') values.push(UNCHANGED);
      else if (kind === 't') {
        const length = this.uint32();
        this.need(length);
        values.push(this.data.toString('utf8', this.offset, this.offset + length));
        this.offset += length;
      } else throw new Error(`pgoutput: a value of an unknown kind '${kind}'`);
    }
    return values;
  }
}

/** An LSN as PostgreSQL writes it (`0/1546EC0`). */
export function lsnText(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** An LSN from PostgreSQL's text (`0/1546EC0`). */
export function parseLsn(text: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!match) throw new Error(`not an LSN: ${text.slice(0, 40)}`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}
