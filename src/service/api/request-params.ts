import type { Context } from 'hono';
import type { ApiEnv } from './env.js';

/**
 * The origin that links in responses use (result files, doc_url): --public-url, else the address lake serve listens
 * on; never the request's Host header, which a caller (or a proxy's cache) would make point anywhere. Only an
 * in-process app, which no HTTP request reaches, falls back to the request's own origin.
 */
export function publicOrigin(c: Context<ApiEnv>): string {
  return c.get('publicUrl') ?? new URL(c.req.url).origin;
}
