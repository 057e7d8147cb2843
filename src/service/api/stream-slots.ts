/**
 * How many event streams (a job's, a source's sync) one credential, and one organization, may hold open on one
 * server at a time. Each open stream reads the store every 3 s for its events and its caller's standing, and the
 * rate limits count only its opening: within them one caller could hold 240 streams (2,400 with an organization's
 * budget over ten callers), hundreds of store reads a second that every other tenant shares.
 */
export const STREAM_LIMITS = { perCaller: 20, perOrganization: 100 } as const;

export type StreamRefusal = 'caller' | 'organization';

/** The streams open on this server, counted by credential and by organization. */
export class StreamSlots {
  private readonly byCaller = new Map<string, number>();
  private readonly byOrganization = new Map<string, number>();

  constructor(private readonly limits: { perCaller: number; perOrganization: number } = STREAM_LIMITS) {}

  /** A slot for one more stream (give it back with release()), or the limit that refuses it. */
  take(credentialId: string, organizationId: string): { release: () => void } | { refused: StreamRefusal } {
    const caller = this.byCaller.get(credentialId) ?? 0;
    if (caller >= this.limits.perCaller) return { refused: 'caller' };
    const organization = this.byOrganization.get(organizationId) ?? 0;
    if (organization >= this.limits.perOrganization) return { refused: 'organization' };
    this.byCaller.set(credentialId, caller + 1);
    this.byOrganization.set(organizationId, organization + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.decrement(this.byCaller, credentialId);
        this.decrement(this.byOrganization, organizationId);
      },
    };
  }

  private decrement(counts: Map<string, number>, key: string): void {
    const left = (counts.get(key) ?? 1) - 1;
    if (left > 0) counts.set(key, left);
    else counts.delete(key);
  }
}
