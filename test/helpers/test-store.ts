import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HomeOptions } from '../../src/service/home/home.js';
import { createMetadataDatabase, dropMigratedTemplate } from './postgres.js';
import { tempDir } from './temp.js';

/**
 * Which metadata store the contract suite runs on: SQLite in the home (the default), or, in the vitest project
 * `postgres`, a database of its own on the machine's PostgreSQL for every home a test file opens.
 */
export const TEST_STORE: 'sqlite' | 'postgres' = process.env.TEST_METADATA_STORE === 'postgres' ? 'postgres' : 'sqlite';

const databases = new Map<string, { options: HomeOptions; drop(): Promise<void> }>();

/** What openHome needs for this home on the suite's store; the same database again when a test reopens the home. */
export async function testHomeOptions(homeDir: string): Promise<HomeOptions> {
  if (TEST_STORE === 'sqlite') return {};
  const known = databases.get(homeDir);
  if (known) return known.options;
  const database = await createMetadataDatabase({ migrated: true });
  const keys = tempDir('lake-keys');
  const keyFile = (name: string): string => {
    const file = join(keys, name);
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
    return file;
  };
  const options: HomeOptions = {
    metadataUrl: database.url,
    signingKeyFile: keyFile('signing.key'),
    secretsKeyFile: keyFile('secrets.key'),
  };
  databases.set(homeDir, { options, drop: database.drop });
  return options;
}

/** Drops the databases this test file made (registered by test/helpers/postgres-store.setup.ts). */
export async function dropTestDatabases(): Promise<void> {
  const all = [...databases.values()];
  databases.clear();
  await Promise.all(all.map((database) => database.drop()));
  await dropMigratedTemplate();
}
