import { describe, expect, it } from 'vitest';
import { STREAM_LIMITS, StreamSlots } from '../../src/service/api/stream-slots.js';

describe('open event streams on one server', () => {
  it('are counted by credential and by organization, and each place comes back once', () => {
    expect(STREAM_LIMITS).toEqual({ perCaller: 20, perOrganization: 100 });
    const slots = new StreamSlots({ perCaller: 2, perOrganization: 3 });
    const a1 = slots.take('tok_a', 'org_1');
    const a2 = slots.take('tok_a', 'org_1');
    expect(slots.take('tok_a', 'org_1')).toEqual({ refused: 'caller' });
    const b1 = slots.take('tok_b', 'org_1');
    // The organization's three places are taken, whoever asks next.
    expect(slots.take('tok_c', 'org_1')).toEqual({ refused: 'organization' });
    expect('release' in slots.take('tok_c', 'org_2')).toBe(true);
    if (!('release' in a1) || !('release' in a2) || !('release' in b1)) throw new Error('a place was refused');
    a1.release();
    a1.release();
    // Released twice, it gave back one place: the organization has one free, the caller one.
    const c1 = slots.take('tok_c', 'org_1');
    expect('release' in c1).toBe(true);
    expect(slots.take('tok_a', 'org_1')).toEqual({ refused: 'organization' });
  });
});
