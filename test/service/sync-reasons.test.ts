import { describe, expect, it } from 'vitest';
import { withoutConnectionDetails } from '../../src/service/syncs/pg-reads.js';

describe("a failed table's reason", () => {
  const settings = {
    config: { database: 'shop_db', host: 'db.internal' },
    secrets: { password: 's3cret-pw', user: 'shop_reader' },
  } as never;

  it('names no host, user, database or password', () => {
    expect(
      withoutConnectionDetails(
        'password authentication failed for user "shop_reader" at db.internal (shop_db) s3cret-pw',
        settings,
      ),
    ).toBe('password authentication failed for user "<user>" at <host> (<database>) <password>');
  });

  it("keeps neither the row DuckDB's reader quotes nor its options with the staging file's path, and stays short", () => {
    const row = `1,${'x'.repeat(3_000_000)}`;
    const message = `Invalid Input Error: CSV Error on Line: 1\nOriginal Line: ${row}\nMaximum line size of 2000000 bytes exceeded.\n\n  file = /home/lake/staging/sync_1/public.t.r0.0.csv\n  delimiter = , (Set By User)\n  null_padding = 0`;
    const reason = withoutConnectionDetails(message, settings);
    expect(reason).toBe('Invalid Input Error: CSV Error on Line: 1\nMaximum line size of 2000000 bytes exceeded.');
    expect(withoutConnectionDetails(`Conversion Error: ${'y'.repeat(5000)}`, settings)).toHaveLength(1001);
  });
});
