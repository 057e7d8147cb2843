import type { MetadataDb } from '../store/metadata-db.js';

/** Daily totals per organization and metric. */
export class UsageStore {
  constructor(private readonly db: MetadataDb) {}

  /**
   * Adds to the day's totals of these metrics in one statement, so concurrent meters (any replica) never lose a
   * count; with `tag`, to that tag's totals instead.
   */
  async add(
    organizationId: string,
    day: string,
    quantities: readonly (readonly [metric: string, quantity: number])[],
    tag?: string,
  ): Promise<void> {
    if (quantities.length === 0) return;
    const [table, key] = tag === undefined ? ['usage_daily', 'metric'] : ['usage_by_tag', 'tag, metric'];
    const values = quantities.map(() => (tag === undefined ? '(?, ?, ?, ?)' : '(?, ?, ?, ?, ?)')).join(', ');
    // A write: inside a transaction (a query's outcome) it goes with the transaction's other statements.
    await this.db.write(
      `INSERT INTO ${table} (organization_id, day, ${key}, quantity) VALUES ${values}
       ON CONFLICT (organization_id, day, ${key}) DO UPDATE SET quantity = ${table}.quantity + excluded.quantity`,
      quantities.flatMap(([metric, quantity]) => [
        organizationId,
        day,
        ...(tag === undefined ? [] : [tag]),
        metric,
        Math.round(quantity),
      ]),
    );
  }

  /** Each tag's totals of a month (`2026-11`), by metric. */
  async monthByTag(
    organizationId: string,
    month: string,
  ): Promise<{ tag: string; metric: string; quantity: number }[]> {
    return this.db.all(
      `SELECT tag, metric, sum(quantity) AS quantity FROM usage_by_tag WHERE organization_id = ? AND day LIKE ?
        GROUP BY tag, metric ORDER BY tag, metric`,
      [organizationId, `${month}-%`],
    );
  }

  /** The days of a month (`2026-11`) that have any usage, oldest first. */
  async month(organizationId: string, month: string): Promise<{ day: string; metric: string; quantity: number }[]> {
    return this.db.all(
      'SELECT day, metric, quantity FROM usage_daily WHERE organization_id = ? AND day LIKE ? ORDER BY day',
      [organizationId, `${month}-%`],
    );
  }
}
