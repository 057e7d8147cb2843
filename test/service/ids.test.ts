import { describe, expect, it } from 'vitest';
import { newId } from '../../src/service/core/ids.js';

describe('newId', () => {
  it('sorts in creation order, also within one millisecond', () => {
    const now = Date.now() + 60_000;
    const ids = Array.from({ length: 2000 }, () => newId('src', now));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]).toMatch(/^src_[0-9a-hjkmnp-tv-z]{26}$/);
  });
});
