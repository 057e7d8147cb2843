import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetadataDatabase } from '../helpers/postgres.js';
import { startReplicaSet, type ReplicaSet } from '../helpers/replicas.js';

const PER_CALLER = 120;
const PER_ORG = 200;

/**
 * Rate limits are budgets of the caller and of its organization, not of the replica a request happens to reach:
 * three replicas on one PostgreSQL store admit what one would.
 */
describe('rate limits across three replicas', () => {
  let database: { url: string; drop(): Promise<void> };
  let set: ReplicaSet;

  beforeAll(async () => {
    database = await createMetadataDatabase();
    set = await startReplicaSet(database.url, 3, {
      LAKE_RATE_LIMIT_PER_CALLER: String(PER_CALLER),
      LAKE_RATE_LIMIT_PER_ORG: String(PER_ORG),
    });
  }, 90_000);

  afterAll(async () => {
    await set?.stop();
    await database?.drop();
  }, 60_000);

  /** Sends `count` requests round-robin over the replicas, ten at a time; the number admitted and how long it took. */
  const burst = async (
    token: string,
    count: number,
  ): Promise<{ admitted: number; refused: number; seconds: number }> => {
    const started = performance.now();
    const statuses: number[] = [];
    for (let i = 0; i < count; i += 10) {
      const batch = Array.from({ length: Math.min(10, count - i) }, async (_, j) => {
        const replica = set.replicas[(i + j) % set.replicas.length]!;
        const response = await fetch(`${replica.url}/whoami`, { headers: { Authorization: `Bearer ${token}` } });
        await response.arrayBuffer();
        return response.status;
      });
      statuses.push(...(await Promise.all(batch)));
    }
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    return {
      admitted: statuses.filter((s) => s === 200).length,
      refused: statuses.filter((s) => s === 429).length,
      seconds: (performance.now() - started) / 1000,
    };
  };

  it('130 requests from one caller spread over 3 replicas: 120 admitted, not 130; then the organization budget is what is left for another caller', async () => {
    const [first] = set.replicas;
    const created = await fetch(`${first!.url}/service-keys`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${set.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'second caller', scopes: ['query:read'], expires_in_days: 1 }),
    });
    expect(created.status).toBe(201);
    const second = ((await created.json()) as { secret: string }).secret;

    // A caller is a person (all their tokens) or an organization's key: the key is another caller of the same organization.
    // One request (the key's creation) already spent one of the owner's and the organization's.
    const owner = await burst(set.token, 130);
    const callerRefill = Math.ceil(owner.seconds * (PER_CALLER / 60)) + 1;
    expect(owner.admitted).toBeGreaterThanOrEqual(PER_CALLER - 1);
    expect(owner.admitted).toBeLessThanOrEqual(PER_CALLER - 1 + callerRefill);
    expect(owner.refused).toBeGreaterThan(0);

    const other = await burst(second, 130);
    const orgLeft = PER_ORG - 1 - owner.admitted;
    const orgRefill = Math.ceil((owner.seconds + other.seconds) * (PER_ORG / 60)) + 1;
    expect(other.admitted).toBeGreaterThanOrEqual(orgLeft);
    expect(other.admitted).toBeLessThanOrEqual(orgLeft + orgRefill);
  }, 60_000);
});
