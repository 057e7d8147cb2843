import type { MetadataDb } from '../store/metadata-db.js';

/** Small facts the store keeps about itself (the owner's credential, what was seeded), by key. */
export class SettingsStore {
  constructor(private readonly db: MetadataDb) {}

  async get(key: string): Promise<string | undefined> {
    return (await this.db.get<{ value: string }>('SELECT value FROM home_settings WHERE key = ?', [key]))?.value;
  }

  async set(key: string, value: string): Promise<void> {
    await this.db.run(
      'INSERT INTO home_settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      [key, value],
    );
  }

  /** Records the key unless it is there already; true when this call recorded it. */
  async setIfAbsent(key: string, value: string): Promise<boolean> {
    return (
      (
        await this.db.run('INSERT INTO home_settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING', [
          key,
          value,
        ])
      ).changes > 0
    );
  }
}
