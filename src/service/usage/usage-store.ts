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
    // The month's days as the key orders them (`2026-11-01` … `2026-11-31`).
    const month = [`${day.slice(0, 7)}-01`, `${day.slice(0, 7)}-31`];
    await this.db.write(
      `INSERT INTO usage_by_tag (organization_id, day, tag, metric, quantity)
       SELECT CAST(? AS TEXT), CAST(? AS TEXT),
         -- A tag the month already names (one look per day by the key) is counted as itself; only a new one has
         -- the month's tags counted.
         CASE WHEN EXISTS (SELECT 1 FROM usage_by_tag WHERE organization_id = ? AND day BETWEEN ? AND ? AND tag = ?)
                THEN CAST(? AS TEXT)
              WHEN (SELECT count(DISTINCT tag) FROM usage_by_tag
                     WHERE organization_id = ? AND day BETWEEN ? AND ? AND tag <> '${OTHER_TAGS}') < ?
                THEN CAST(? AS TEXT)
              ELSE '${OTHER_TAGS}' END,
         m.metric, m.quantity
       FROM (${rows}) m WHERE true
       ON CONFLICT (organization_id, day, tag, metric) DO UPDATE SET quantity = usage_by_tag.quantity + excluded.quantity`,
      [
        organizationId,
        day,
        ...[organizationId, ...month, tag, tag],
        ...[organizationId, ...month, MAX_TAGS_A_MONTH, tag],
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
