import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { createMetadataDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

/** `lake init --metadata-url`: what it prints for the replicas names no password, wherever the URL carries one. */
describe('lake init --metadata-url', () => {
  let database: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    database = await createMetadataDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('prints the replicas’ environment with every password of the URL masked', async () => {
    const url = new URL(database.url);
    url.username = 'postgres';
    url.password = 'userinfo-secret';
    url.search = '?password=query-secret&sslpassword=key-secret&application_name=lake';
    const init = await runLake(['init', '--json', '--metadata-url', url.toString()], {
      env: { LAKE_HOME: join(tempDir('lake-init-metadata'), 'home') },
    });
    expect(init.code, init.stderr).toBe(0);
    const printed = JSON.parse(init.stdout) as { replica_environment: { LAKE_METADATA_URL: string } };
    const shown = printed.replica_environment.LAKE_METADATA_URL;
    expect(shown).not.toMatch(/secret/);
    expect(shown).toContain('application_name=lake');
    expect(init.stderr).not.toMatch(/secret/);
  });
});
