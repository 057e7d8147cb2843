import type { MetadataDb } from '../store/metadata-db.js';

/** Daily totals per organization and metric. */
export class UsageStore {
  constructor(private readonly db: MetadataDb) {}

  /** Adds to the day's total in one statement, so concurrent meters (any replica) never lose a count. */
  async add(organizationId: string, day: string, metric: string, quantity: number): Promise<void> {
    await this.db.run(
      `INSERT INTO usage_daily (organization_id, day, metric, quantity) VALUES (?, ?, ?, ?)
       ON CONFLICT (organization_id, day, metric) DO UPDATE SET quantity = usage_daily.quantity + excluded.quantity`,
      [organizationId, day, metric, Math.round(quantity)],
    );
  }

  /** Adds to a tag's total of a metric for the day (a tagged query's), as add does. */
  async addForTag(organizationId: string, day: string, tag: string, metric: string, quantity: number): Promise<void> {
    await this.db.run(
      `INSERT INTO usage_by_tag (organization_id, day, tag, metric, quantity) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (organization_id, day, tag, metric) DO UPDATE SET quantity = usage_by_tag.quantity + excluded.quantity`,
      [organizationId, day, tag, metric, Math.round(quantity)],
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
