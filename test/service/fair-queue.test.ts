import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/service/queries/fair-queue.js';

interface Item {
  organizationId: string;
  name: string;
}
const item = (organizationId: string, name: string): Item => ({ organizationId, name });

describe('FairQueue', () => {
  it("starts an organization's queries in the order they came", () => {
    const queue = new FairQueue<Item>(1, 1);
    for (const name of ['a1', 'a2', 'a3']) queue.enqueue(item('A', name));
    const order: string[] = [];
    for (let next = queue.take(); next; next = queue.take()) {
      order.push(next.name);
      queue.ended('A');
    }
    expect(order).toEqual(['a1', 'a2', 'a3']);
  });

  it('gives a free slot to the organization running fewest, so a busy one delays another by one slot at most', () => {
    const queue = new FairQueue<Item>(4, 2);
    for (let i = 1; i <= 8; i++) queue.enqueue(item('A', `a${i}`));
    expect([queue.take()?.name, queue.take()?.name, queue.take()]).toEqual(['a1', 'a2', undefined]);
    // A holds its share (2 of 4); B's query takes a free slot at once, ahead of A's six queued.
    expect(queue.hasRoomFor('B')).toBe(true);
    queue.enqueue(item('B', 'b1'));
    queue.enqueue(item('B', 'b2'));
    expect(queue.take()?.name).toBe('b1');
    expect(queue.take()?.name).toBe('b2');
    expect(queue.take()).toBeUndefined();
    // When one of A's ends, the slot goes to A's next; when B's end, A cannot take more than its share.
    queue.ended('A');
    expect(queue.take()?.name).toBe('a3');
    queue.ended('B');
    expect(queue.take()).toBeUndefined();
  });

  it('breaks ties between organizations by who waited longest', () => {
    const queue = new FairQueue<Item>(1, 1);
    queue.enqueue(item('A', 'a1'));
    queue.enqueue(item('B', 'b1'));
    queue.enqueue(item('A', 'a2'));
    const order: string[] = [];
    for (let next = queue.take(); next; next = queue.take()) {
      order.push(next.name);
      queue.ended(next.organizationId);
    }
    expect(order).toEqual(['a1', 'b1', 'a2']);
  });

  it('a removed (cancelled) query never starts', () => {
    const queue = new FairQueue<Item>(1, 1);
    const first = item('A', 'a1');
    const second = item('A', 'a2');
    queue.enqueue(first);
    queue.enqueue(second);
    expect(queue.remove(first)).toBe(true);
    expect(queue.remove(first)).toBe(false);
    expect(queue.take()).toBe(second);
    expect(queue.take()).toBeUndefined();
  });

  it('hasRoomFor is false while the organization has queries waiting, so nobody jumps its own queue', () => {
    const queue = new FairQueue<Item>(2, 2);
    queue.started('A');
    queue.started('A');
    queue.enqueue(item('A', 'a3'));
    queue.ended('A');
    expect(queue.hasRoomFor('A')).toBe(false);
    expect(queue.take()?.name).toBe('a3');
  });

  it("has an idle slot for another replica's work only when a worker is free and nothing waits here; names organizations at their share", () => {
    const queue = new FairQueue<Item>(2, 1);
    expect(queue.hasIdleSlot()).toBe(true);
    queue.enqueue(item('A', 'a1'));
    expect(queue.hasIdleSlot()).toBe(false);
    expect(queue.take()?.name).toBe('a1');
    expect(queue.hasIdleSlot()).toBe(true);
    expect(queue.organizationsAtShare()).toEqual(['A']);
    // A slot held while a claim is made is not free for anyone else.
    queue.reserveSlot();
    expect(queue.hasIdleSlot()).toBe(false);
    expect(queue.hasRoomFor('B')).toBe(false);
    queue.releaseSlot();
    expect(queue.hasRoomFor('B')).toBe(true);
    queue.ended('A');
    expect(queue.organizationsAtShare()).toEqual([]);
  });
});
