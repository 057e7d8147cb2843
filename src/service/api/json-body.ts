import type { Context } from 'hono';
import { LakeServiceError } from '../core/errors.js';
import type { ApiEnv } from './env.js';

/**
 * Reads a JSON object body. A body must say it is JSON; an empty body reads as {} so that endpoints whose fields
 * are all optional can be called without one.
 */
export async function readJsonObject(c: Context<ApiEnv>): Promise<Record<string, unknown>> {
  const text = await c.req.text();
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
