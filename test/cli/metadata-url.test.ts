import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLake, type CliResult } from '../helpers/cli.js';
import { createMetadataDatabase, freePort } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

/**
 * A PostgreSQL metadata store named by --metadata-url or LAKE_METADATA_URL: what `lake init` prints for the replicas
 * names no password, wherever the URL carries one, and a store lake cannot use is said as the setting to check.
 */
describe('a PostgreSQL metadata URL on the command line', () => {
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

  it('says a store it cannot reach, or one that refuses it, as the setting to check, with no password', async () => {
    const home = tempDir('lake-metadata-unusable');
    for (const name of ['signing.key', 'secrets.key'])
      writeFileSync(join(home, name), randomBytes(32).toString('hex'), { mode: 0o600 });
    const run = (url: string): Promise<CliResult> =>
      runLake(['--json', 'catalog', 'ls'], {
        env: {
          LAKE_HOME: join(home, 'home'),
          LAKE_METADATA_URL: url,
          LAKE_SIGNING_KEY_FILE: join(home, 'signing.key'),
          LAKE_SECRETS_KEY_FILE: join(home, 'secrets.key'),
        },
      });
    const down = new URL(database.url);
    down.port = String(await freePort());
    down.username = 'postgres';
    down.password = 'userinfo-secret';
    down.search = '?password=query-secret';
    const unreachable = await run(down.toString());
    expect(unreachable.code, unreachable.stderr).toBe(5);
    const reached = JSON.parse(unreachable.stderr) as { error: { code: string; message: string; hint: string } };
    expect(reached.error.code).toBe('metadata_store_unavailable');
    expect(reached.error.message).toContain(`127.0.0.1:${down.port}`);
    expect(reached.error.hint).toContain('LAKE_METADATA_URL');
    const missing = new URL(database.url);
    missing.pathname = '/lake_no_such_database';
    missing.password = 'userinfo-secret';
    const refused = await run(missing.toString());
    expect(refused.code, refused.stderr).toBe(2);
    const said = JSON.parse(refused.stderr) as { error: { code: string; message: string; hint: string } };
    expect(said.error.code).toBe('invalid_setting');
    expect(said.error.message).toContain('lake_no_such_database');
    expect(said.error.hint).toContain('LAKE_METADATA_URL');
    for (const out of [unreachable, refused]) expect(out.stderr).not.toMatch(/secret/);
  });

  it('refuses a metadata URL that is not PostgreSQL, from the flag or the setting, and makes no home', async () => {
    const root = tempDir('lake-metadata-not-postgres');
    const home = join(root, 'home');
    const url = 'mysql://root:userinfo-secret@127.0.0.1/lake';
    for (const [args, env] of [
      [['init', '--json', '--metadata-url', url], {}],
      [['init', '--json'], { LAKE_METADATA_URL: url }],
      [['admin', 'pat', 'create', '--scopes', 'all', '--json'], { LAKE_METADATA_URL: url }],
    ] as [string[], Record<string, string>][]) {
      const run = await runLake(args, { env: { LAKE_HOME: home, ...env } });
      // A usage error naming the setting, not a local SQLite home made instead of the shared store it was asked for.
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stdout).toBe('');
      const { error } = JSON.parse(run.stderr) as { error: { code: string; message: string } };
      expect(error.code).toBe('invalid_setting');
      expect(error.message).toMatch(/must be a PostgreSQL URL/);
      expect(run.stderr).not.toMatch(/secret/);
      expect(existsSync(home)).toBe(false);
    }
  });
});
