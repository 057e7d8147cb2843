import type { Context } from 'hono';
import { LakeServiceError } from '../core/errors.js';
import type { ApiEnv } from './env.js';

/**
 * Reads a JSON object body. A body must say it is JSON; an empty body reads as {} so that endpoints whose fields
 * are all optional can be called without one.
 */
export async function readJsonObject(c: Context<ApiEnv>): Promise<Record<string, unknown>> {
  const text = utf8Body(new Uint8Array(await c.req.arrayBuffer()));
  if (text.trim() === '') return {};
  const contentType = c.req.header('Content-Type') ?? '';
  if (!/^application\/(.+\+)?json\b/i.test(contentType.trim())) {
    throw new LakeServiceError(
      'invalid_content_type',
      `Send the body as JSON with Content-Type: application/json (got '${contentType.slice(0, 80) || 'none'}').`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new LakeServiceError('invalid_json', 'The request body is not valid JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new LakeServiceError('invalid_json', 'The request body must be a JSON object.');
  }
  return parsed as Record<string, unknown>;
}

/**
 * The body as text: JSON is UTF-8 (RFC 8259), and bytes that are not (a client that sent Latin-1) are refused
 * rather than read as U+FFFD, which would store a name or run SQL other than sent.
 */
function utf8Body(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new LakeServiceError(
      'invalid_json',
      'The request body is not UTF-8 text: send JSON encoded as UTF-8 (a character outside ASCII as its UTF-8 bytes, or escaped as \\uXXXX).',
    );
  }
}
