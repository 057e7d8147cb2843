import type { Context } from 'hono';
import { LakeServiceError } from '../errors.js';
import type { ApiEnv } from './env.js';

/** A whole-number query parameter within [min, max], or the fallback when absent; anything else names the param. */
export function integerParam(c: Context<ApiEnv>, name: string, min: number, max: number, fallback: number): number {
  const raw = c.req.query(name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new LakeServiceError('parameter_invalid', `${name} must be a whole number from ${min} to ${max}.`, { param: name });
  }
  return Number(raw);
}

/**
 * The origin that links in responses use (result files, doc_url): --public-url, else the address lake serve listens
 * on; never the request's Host header, which a caller (or a proxy's cache) would make point anywhere. Only an
 * in-process app, which no HTTP request reaches, falls back to the request's own origin.
 */
export function publicOrigin(c: Context<ApiEnv>): string {
  return c.get('services').publicUrl ?? new URL(c.req.url).origin;
}
