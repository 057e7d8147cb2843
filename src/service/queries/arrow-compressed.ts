import { createWriteStream, openAsBlob } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type * as Arrow from 'apache-arrow';
import { requireCommonJs } from '../../support/load-commonjs.js';
import { concatBatches } from './arrow-concat.js';
import { TextDictionary } from './arrow-dictionary.js';

type ParquetWasm = typeof import('parquet-wasm/node');
type Zstd = typeof import('@bokuweb/zstd-wasm');

/** Rows asked of each batch read: the Parquet reader also ends a batch at each row group (122,880 as lake writes them). */
const BATCH_ROWS = 131_072;

/**
 * The batches read are joined into batches of at most this many rows and this many bytes as read, before they are
 * encoded and compressed: zstd compresses each buffer of a batch on its own, and a row group's buffer is too short
 * for it to find what repeats at a longer distance (a dictionary's indices, counting up within each row group,
 * took 19 MB of a 41 MB stream in batches of a row group, 2.5 MB in batches of 1,048,576 rows: docs/performance.md).
 * The byte bound keeps a wide result's batch, and the memory it takes to make it, to tens of megabytes.
 */
export const JOINED_BATCH = { rows: 1_048_576, bytes: 32 * 2 ** 20 };

/** zstd's fastest level: higher levels made these buffers no smaller (measured in docs/performance.md). */
const ZSTD_LEVEL = 1;

let zstdReady: Promise<Arrow.Codec> | undefined;

/**
 * zstd as apache-arrow's codec, loaded once a process: the WebAssembly module's `init` is not idempotent (a second
 * one leaves its functions and its memory views on different instances, and compressed bytes read back as zeros).
 */
export function zstdCodec(): Promise<Arrow.Codec> {
  zstdReady ??= (async () => {
    const zstd = requireCommonJs('@bokuweb/zstd-wasm') as Zstd;
    await zstd.init();
    return {
      encode: (data: Uint8Array) => zstd.compress(data, ZSTD_LEVEL),
      decode: (data: Uint8Array) => zstd.decompress(data),
    };
  })();
  zstdReady.catch(() => (zstdReady = undefined));
  return zstdReady;
}

/** apache-arrow with the zstd codec registered for body compression; both loaded only when a stream is made. */
async function loadArrow(): Promise<typeof Arrow> {
  const arrow = requireCommonJs('apache-arrow') as typeof Arrow;
  arrow.compressionRegistry.set(arrow.CompressionType.ZSTD, await zstdCodec());
  return arrow;
}

/**
 * Writes a Parquet file as one Arrow IPC stream whose record batch bodies are zstd-compressed (the IPC format's own
 * body compression, buffer by buffer) and whose text columns named in `dictionaryColumns` (by position) are
 * dictionary-encoded, with one dictionary growing across the stream by delta batches. Read by arrow-rs from the
 * Parquet, re-encoded by apache-arrow, batch by batch: memory is bounded by a batch and the dictionaries' limits.
 */
export async function writeCompressedArrowStream(
  parquet: string,
  target: string,
  dictionaryColumns: ReadonlySet<number>,
  joined: { rows: number; bytes: number } = JOINED_BATCH,
): Promise<void> {
  const arrow = await loadArrow();
  const wasm = requireCommonJs('parquet-wasm/node') as ParquetWasm;
  const file = await wasm.ParquetFile.fromFile(await openAsBlob(parquet));
  const out = createWriteStream(target, { mode: 0o600 });
  const writer = new arrow.RecordBatchStreamWriter({ compressionType: arrow.CompressionType.ZSTD });
  // The writer queues its bytes; this drains them to the file as they come, waiting when the disk is behind.
  const drained = (async () => {
    for await (const bytes of writer) if (!out.write(bytes)) await once(out, 'drain');
  })();
  try {
    const stream = (await file.stream({ batchSize: BATCH_ROWS })) as ReadableStream<{ intoIPCStream(): Uint8Array }>;
    let encoder: BatchEncoder | undefined;
    let pending: Arrow.RecordBatch[] = [];
    let pendingRows = 0;
    let pendingBytes = 0;
    const writePending = (using: BatchEncoder): void => {
      if (pending.length === 0) return;
      const one = concatBatches(arrow, pending);
      for (const recordBatch of one ? [one] : pending) writer.write(using.encode(recordBatch));
      pending = [];
      pendingRows = 0;
      pendingBytes = 0;
    };
    for await (const batch of stream) {
      const read = arrow.tableFromIPC(batch.intoIPCStream());
      encoder ??= new BatchEncoder(arrow, read.schema, dictionaryColumns);
      for (const recordBatch of read.batches) {
        // Written before a batch would take them past either bound: a joined batch, and its copy, stay within them
        // (a batch larger than the bound alone goes as it was read, uncopied).
        const bytes = recordBatch.data.byteLength;
        if (pendingRows + recordBatch.numRows > joined.rows || pendingBytes + bytes > joined.bytes)
          writePending(encoder);
        pending.push(recordBatch);
        pendingRows += recordBatch.numRows;
        pendingBytes += bytes;
      }
      // The writer queues whatever it is given: the next batch waits for the file to take this one (bounded memory
      // on a slow disk too).
      await new Promise((resolve) => setImmediate(resolve));
      if (out.writableNeedDrain) await once(out, 'drain');
    }
    if (encoder) writePending(encoder);
    // A result of no rows is its schema alone.
    else {
      const schema = arrow.tableFromIPC(file.schema().intoIPCStream()).schema;
      writer.reset(undefined, new BatchEncoder(arrow, schema, dictionaryColumns).schema);
    }
    writer.finish();
    await drained;
    out.end();
    await finished(out);
  } catch (error) {
    writer.abort();
    out.destroy();
    await drained.catch(() => undefined);
    throw error;
  } finally {
    file.free();
  }
}

/** The stream's schema (the chosen text columns as dictionaries) and each batch re-encoded into it. */
class BatchEncoder {
  readonly schema: Arrow.Schema;
  private readonly dictionaries = new Map<number, TextDictionary>();

  constructor(
    private readonly arrow: typeof Arrow,
    read: Arrow.Schema,
    dictionaryColumns: ReadonlySet<number>,
  ) {
    const fields = read.fields.map((field, position) => {
      if (!dictionaryColumns.has(position) || field.type.typeId !== arrow.Type.Utf8) return field;
      this.dictionaries.set(position, new TextDictionary(arrow));
      const type = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32(), position);
      return new arrow.Field(field.name, type, field.nullable, field.metadata);
    });
    this.schema = new arrow.Schema(fields, read.metadata);
  }

  encode(batch: Arrow.RecordBatch): Arrow.RecordBatch {
    const children = batch.data.children.map((column, position) => {
      const dictionary = this.dictionaries.get(position);
      const type = this.schema.fields[position]?.type;
      return dictionary && type ? dictionary.encode(column as Arrow.Data<Arrow.Utf8>, type) : column;
    });
    const struct = new this.arrow.Struct(this.schema.fields);
    return new this.arrow.RecordBatch(
      this.schema,
      this.arrow.makeData({ type: struct, length: batch.numRows, nullCount: 0, children }),
    );
  }
}
