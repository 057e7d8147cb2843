import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { Hono } from 'hono';
import { HttpError } from '../http-error.js';
import type { ApiEnv } from '../env.js';
import { SERVICE_ROUTES } from '../../../contract/routes.js';
import { mount } from '../contract-route.js';
import { FILE_FORMAT_TYPES } from '../../queries/result-formats.js';

interface ByteRange {
  start: number;
  end: number;
}

/** One `bytes=a-b`, `bytes=a-` or `bytes=-n` range; undefined for no header; 'unsatisfiable' when outside the file. */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return 'unsatisfiable';
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

/**
 * Result downloads by signed URL: no credential, the signature is the permission. Supports HEAD and single
 * Range requests so large downloads can resume; every refusal is a JSON error, never the file.
 */
export function fileRoutes(app: Hono<ApiEnv>): void {
  mount(app, SERVICE_ROUTES.downloadResultFile, async (c, { params: { id }, query }) => {
    const format = query.file_format ?? 'parquet';
    const { file, size, release } = await c
      .get('services')
      .results.download(id, query.expires, query.signature, format);
    const range = parseRange(c.req.header('Range'), size);
    if (c.req.method === 'HEAD' || size === 0 || range === 'unsatisfiable') release();
    c.header('Accept-Ranges', 'bytes');
    if (range === 'unsatisfiable') {
      throw new HttpError('range_not_satisfiable', `The file has ${size} bytes; the Range asks for bytes outside it.`, {
        'Content-Range': `bytes */${size}`,
      });
    }
    const { start, end } = range ?? { start: 0, end: size - 1 };
    const { mediaType, extension } = FILE_FORMAT_TYPES[format];
    c.header('Content-Type', mediaType);
    c.header('Content-Disposition', `attachment; filename="${id}.${extension}"`);
    c.header('ETag', `"${id}-${format}-${size}"`);
    c.header('Cache-Control', 'private, no-store');
    c.header('Content-Length', String(size === 0 ? 0 : end - start + 1));
    if (range) c.header('Content-Range', `bytes ${start}-${end}/${size}`);
    const status = range ? 206 : 200;
    // Hono answers HEAD through this GET handler; opening the file then would leak a descriptor.
    if (c.req.method === 'HEAD' || size === 0) return c.body(null, status);
    // Kept in the cache until the last byte is sent (or the client goes).
    const reading = createReadStream(file, { start, end }).once('close', release);
    const stream = Readable.toWeb(reading) as ReadableStream<Uint8Array>;
    return c.body(stream, status);
  });
}
