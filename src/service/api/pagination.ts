import type { Context } from 'hono';
import { LakeServiceError } from '../errors.js';
import type { ApiEnv } from './env.js';

export interface PageRequest {
  limit: number;
  startingAfter: string | undefined;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/** Reads `limit` (whole number in range) and `starting_after` from the query string, refusing anything else. */
export function readPageRequest(c: Context<ApiEnv>, defaults: { limit: number; max: number }): PageRequest {
  const raw = c.req.query('limit');
  let limit = defaults.limit;
  if (raw !== undefined) {
    if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > defaults.max) {
      throw new LakeServiceError('parameter_invalid', `limit must be a whole number from 1 to ${defaults.max}.`, { param: 'limit' });
    }
    limit = Number(raw);
  }
  const startingAfter = c.req.query('starting_after');
  if (startingAfter === '') throw new LakeServiceError('invalid_cursor', 'starting_after is empty.', { param: 'starting_after' });
  return { limit, startingAfter };
}

/** The spec's list envelope; next_cursor is the id of the last item whenever more remain. */
export function listBody<T extends { id: string }>(page: Page<T>): object {
  const last = page.data[page.data.length - 1];
  return { object: 'list', data: page.data, has_more: page.hasMore, next_cursor: page.hasMore && last ? last.id : null };
}
