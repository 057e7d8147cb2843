/**
 * Which accepted query starts next, when a worker is free. Each organization has its own first-in-first-out
 * queue; a free slot goes to the organization running the fewest queries (ties: the one whose head waited
 * longest), and no organization holds more than its share of slots. So an organization with many long queries
 * delays another's small query by at most one free slot, and never holds every slot. Pure bookkeeping: the
 * caller starts what take() returns and reports when it ends.
 */
export class FairQueue<T extends { organizationId: string }> {
  private readonly queues = new Map<string, { item: T; seq: number }[]>();
  private readonly runningBy = new Map<string, number>();
  private running = 0;
  private seq = 0;

  constructor(
    private readonly slots: number,
    private readonly perOrganization: number,
  ) {}

  /** True when a query of this organization could start at once, ahead of nobody. */
  hasRoomFor(organizationId: string): boolean {
    return (
      this.running < this.slots &&
      this.runningOf(organizationId) < this.perOrganization &&
      !this.queues.has(organizationId)
    );
  }

  /** Items waiting here, and slots in use (for metrics). */
  depth(): { waiting: number; running: number } {
    let waiting = 0;
    for (const queue of this.queues.values()) waiting += queue.length;
    return { waiting, running: this.running };
  }

  /** Items waiting here, per organization (for metrics). */
  waitingByOrganization(): Map<string, number> {
    return new Map([...this.queues].map(([organizationId, queue]) => [organizationId, queue.length]));
  }

  /** True when a worker is free and nothing waits here for it: room to take work another process queued. */
  hasIdleSlot(): boolean {
    return this.running < this.slots && this.queues.size === 0;
  }

  /** Organizations holding their whole share of slots here: work of theirs must not start here now. */
  organizationsAtShare(): string[] {
    return [...this.runningBy]
      .filter(([, running]) => running >= this.perOrganization)
      .map(([organizationId]) => organizationId);
  }

  /** Holds a slot for work whose organization is not known yet; give it back with releaseSlot(). */
  reserveSlot(): void {
    this.running++;
  }

  releaseSlot(): void {
    this.running--;
  }

  enqueue(item: T): void {
    const queue = this.queues.get(item.organizationId) ?? [];
    queue.push({ item, seq: ++this.seq });
    this.queues.set(item.organizationId, queue);
  }

  /** Takes a queued item out without starting it; false when it was not queued. */
  remove(item: T): boolean {
    const queue = this.queues.get(item.organizationId);
    const at = queue?.findIndex((q) => q.item === item) ?? -1;
    if (!queue || at < 0) return false;
    queue.splice(at, 1);
    if (queue.length === 0) this.queues.delete(item.organizationId);
    return true;
  }

  /** The next item to start, counted as running; undefined while no slot is free or nothing may start. */
  take(): T | undefined {
    if (this.running >= this.slots) return undefined;
    let best: { organizationId: string; running: number; seq: number } | undefined;
    for (const [organizationId, queue] of this.queues) {
      const running = this.runningOf(organizationId);
      const head = queue[0];
      if (!head || running >= this.perOrganization) continue;
      if (!best || running < best.running || (running === best.running && head.seq < best.seq))
        best = { organizationId, running, seq: head.seq };
    }
    if (!best) return undefined;
    const queue = this.queues.get(best.organizationId) as { item: T; seq: number }[];
    const { item } = queue.shift() as { item: T };
    if (queue.length === 0) this.queues.delete(best.organizationId);
    this.started(item.organizationId);
    return item;
  }

  /** Counts a query that starts without having been queued. */
  started(organizationId: string): void {
    this.running++;
    this.runningBy.set(organizationId, this.runningOf(organizationId) + 1);
  }

  ended(organizationId: string): void {
    this.running--;
    const left = this.runningOf(organizationId) - 1;
    if (left > 0) this.runningBy.set(organizationId, left);
    else this.runningBy.delete(organizationId);
  }

  private runningOf(organizationId: string): number {
    return this.runningBy.get(organizationId) ?? 0;
  }
}
