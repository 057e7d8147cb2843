import type { Clock } from '../core/clock.js';
import type { MetadataDb } from '../store/metadata-db.js';
import type { RateCells } from './rate-limiter.js';

/**
 * Rate-limit cells in the metadata store that replicas share: each admission reads and advances its keys in one
 * transaction holding the keys' locks, so 130 requests of one caller spread over three replicas admit 120, not 360.
 */
export class StoredRateCells implements RateCells {
  constructor(
    private readonly db: MetadataDb,
    private readonly clock: Clock,
  ) {}

  async update<T>(
    keys: readonly string[],
    decide: (tats: ReadonlyMap<string, number>) => { result: T; write: ReadonlyMap<string, number> },
  ): Promise<T> {
    if (keys.length === 0) return decide(new Map()).result;
    return this.db.transaction(
      keys.map((key) => `rate:${key}` as const),
      async () => {
        const rows = await this.db.all<{ key: string; tat: number }>(
          `SELECT key, tat FROM rate_limit_cells WHERE key IN (${keys.map(() => '?').join(', ')})`,
          [...keys],
        );
        const { result, write } = decide(new Map(rows.map((row) => [row.key, row.tat])));
        for (const [key, tat] of write) {
          await this.db.run(
            'INSERT INTO rate_limit_cells (key, tat) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET tat = excluded.tat',
            [key, Math.ceil(tat)],
          );
        }
        return result;
      },
    );
  }

  /** Removes cells whose budget is full again: they hold nothing a fresh cell would not. */
  async forgetIdle(): Promise<void> {
    await this.db.run('DELETE FROM rate_limit_cells WHERE tat <= ?', [this.clock.now()]);
  }
}
