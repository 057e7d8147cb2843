import { createWriteStream, openAsBlob } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { requireCommonJs } from '../../support/load-commonjs.js';

type ParquetWasm = typeof import('parquet-wasm/node');

/** Rows per Arrow record batch: batches of a few megabytes, so memory stays bounded whatever the result's size. */
const BATCH_ROWS = 65_536;

/** The IPC stream's end: a continuation marker and a zero length. */
const END_OF_STREAM = Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/**
 * Writes a Parquet file as one Arrow IPC stream (the streaming format: a schema message, then record batches), batch
 * by batch: the Parquet is read by arrow-rs (parquet-wasm, loaded only here), each batch is an IPC stream of its own,
 * and the file keeps the first one's schema message and, of every stream, the messages after the schema (its
 * batch, and any dictionary, which the streaming format lets replace the last), then one end-of-stream marker.
 */
export async function writeArrowStream(parquet: string, target: string): Promise<void> {
  const wasm = requireCommonJs('parquet-wasm/node') as ParquetWasm;
  const file = await wasm.ParquetFile.fromFile(await openAsBlob(parquet));
  const out = createWriteStream(target, { mode: 0o600 });
  const write = async (bytes: Uint8Array): Promise<void> => {
    if (!out.write(bytes)) await once(out, 'drain');
  };
  try {
    const stream = (await file.stream({ batchSize: BATCH_ROWS })) as ReadableStream<{ intoIPCStream(): Uint8Array }>;
    let first = true;
    for await (const batch of stream) {
      const ipc = batch.intoIPCStream();
      const messages = ipc.subarray(0, ipc.byteLength - END_OF_STREAM.length);
      await write(first ? messages : messages.subarray(schemaMessageLength(ipc)));
      first = false;
    }
    // A result of no rows is its schema alone.
    if (first) await write(file.schema().intoIPCStream().subarray(0, -END_OF_STREAM.length));
    out.end(END_OF_STREAM);
    await finished(out);
  } catch (error) {
    out.destroy();
    throw error;
  } finally {
    file.free();
  }
}

/** The bytes of the schema message an IPC stream starts with: the continuation marker, its length, its metadata. */
function schemaMessageLength(ipc: Uint8Array): number {
  const view = new DataView(ipc.buffer, ipc.byteOffset, ipc.byteLength);
  if (view.getUint32(0, true) !== 0xffffffff) throw new Error('An Arrow IPC stream did not start as one.');
  return 8 + view.getInt32(4, true);
}
