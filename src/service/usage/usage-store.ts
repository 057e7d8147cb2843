import type { MetadataDb } from '../store/metadata-db.js';

/** The most tags a month's usage names one by one; the rest are summed as OTHER_TAGS. */
export const MAX_TAGS_A_MONTH = 1000;

/** Where the usage of tags past MAX_TAGS_A_MONTH goes: no tag can be named so (a tag has no parentheses). */
export const OTHER_TAGS = '(other tags)';

/** Daily totals per organization and metric. */
export class UsageStore {
  constructor(private readonly db: MetadataDb) {}

  /**
   * Adds to the day's totals of these metrics in one statement, so concurrent meters (any replica) never lose a
   * count; with `tag`, to that tag's totals instead (addTagged).
   */
  async add(
    organizationId: string,
    day: string,
    quantities: readonly (readonly [metric: string, quantity: number])[],
    tag?: string,
  ): Promise<void> {
    if (quantities.length === 0) return;
    if (tag !== undefined) return this.addTagged(organizationId, day, quantities, tag);
    const values = quantities.map(() => '(?, ?, ?, ?)').join(', ');
    // A write: inside a transaction (a query's outcome) it goes with the transaction's other statements.
    await this.db.write(
      `INSERT INTO usage_daily (organization_id, day, metric, quantity) VALUES ${values}
       ON CONFLICT (organization_id, day, metric) DO UPDATE SET quantity = usage_daily.quantity + excluded.quantity`,
      quantities.flatMap(([metric, quantity]) => [organizationId, day, metric, Math.round(quantity)]),
    );
  }

  /**
   * Adds to a tag's totals of the day, or to OTHER_TAGS' once the month already counts MAX_TAGS_A_MONTH others
   * (decided in the same statement): tags are the caller's to make up, ten a query, and each new one was a row a
   * day and a line of every usage report for good.
   */
  private async addTagged(
    organizationId: string,
    day: string,
    quantities: readonly (readonly [metric: string, quantity: number])[],
    tag: string,
  ): Promise<void> {
    const rows = quantities
      .map(() => 'SELECT CAST(? AS TEXT) AS metric, CAST(? AS BIGINT) AS quantity')
      .join(' UNION ALL ');
    await this.db.write(
      `INSERT INTO usage_by_tag (organization_id, day, tag, metric, quantity)
       SELECT CAST(? AS TEXT), CAST(? AS TEXT),
         (SELECT CASE WHEN count(DISTINCT CASE WHEN tag <> '${OTHER_TAGS}' THEN tag END) < ?
                        OR max(CASE WHEN tag = ? THEN 1 ELSE 0 END) = 1
                      THEN CAST(? AS TEXT) ELSE '${OTHER_TAGS}' END
            FROM usage_by_tag WHERE organization_id = ? AND day LIKE ?),
         m.metric, m.quantity
       FROM (${rows}) m WHERE true
       ON CONFLICT (organization_id, day, tag, metric) DO UPDATE SET quantity = usage_by_tag.quantity + excluded.quantity`,
      [
        organizationId,
        day,
        MAX_TAGS_A_MONTH,
        tag,
        tag,
        organizationId,
        `${day.slice(0, 7)}-%`,
        ...quantities.flatMap(([metric, quantity]) => [metric, Math.round(quantity)]),
      ],
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
