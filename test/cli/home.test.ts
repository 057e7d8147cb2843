import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/service/store/migrations.js';
import { runLake } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const mode = (file: string): number => statSync(file).mode & 0o777;

/** Every file and folder beneath `root` whose mode lets others of the machine in. */
function openToOthers(root: string): string[] {
  const found: string[] = [];
  const walk = (path: string): void => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    if ((stat.mode & 0o077) !== 0) found.push(`${path} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry));
  };
  walk(root);
  return found;
}

/** A folder open to others (0755) holding `file` (0644) and a folder `folder` (0755), as a shared folder is. */
function openFolder(name: string, file: string, folder: string): string {
  const root = tempDir(name);
  chmodSync(root, 0o755);
  writeFileSync(join(root, file), 'ab'.repeat(32), { mode: 0o644 });
  chmodSync(join(root, file), 0o644);
  mkdirSync(join(root, folder), { mode: 0o755 });
  chmodSync(join(root, folder), 0o755);
  return root;
}

describe('the local home', () => {
  it("every file the lake makes is its user's alone (metadata and its WAL, catalogs, Parquet, results), and a looser home is tightened", async () => {
    const home = join(tempDir('lake-modes'), 'home');
    // Under the usual umask (022), as a user's shell would start it.
    const queried = await runLake(['--home', home, 'query', 'select count(*) as n from lake.demo.orders', '--json']);
    expect(queried.code, queried.stderr).toBe(0);
    const synced = await runLake([
      '--home',
      home,
      'sources',
      'create',
      '--connector',
      'sample',
      '--name',
      'modes',
      '--json',
    ]);
    expect(synced.code, synced.stderr).toBe(0);
    const sync = await runLake([
      '--home',
      home,
      'sync',
      'start',
      (JSON.parse(synced.stdout) as { id: string }).id,
      '--json',
    ]);
    expect(sync.code, sync.stderr).toBe(0);
    expect(openToOthers(home)).toEqual([]);

    // A home an older lake (or a person) left open is tightened when it is next opened.
    chmodSync(home, 0o755);
    mkdirSync(join(home, 'extra'), { mode: 0o755 });
    chmodSync(join(home, 'extra'), 0o755);
    writeFileSync(join(home, 'extra', 'notes.txt'), 'x', { mode: 0o644 });
    chmodSync(join(home, 'extra', 'notes.txt'), 0o644);
    chmodSync(join(home, 'metadata.sqlite'), 0o644);
    expect(openToOthers(home).length).toBeGreaterThan(0);
    const again = await runLake(['--home', home, 'query', 'select 1', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(openToOthers(home)).toEqual([]);
  }, 60_000);

  it('a home or profiles folder that cannot be made is said with what to change, never a hang (Node hangs under /proc)', async () => {
    const root = tempDir('lake-home-unusable');
    writeFileSync(join(root, 'a-file'), '');
    // Node 20's recursive mkdir never returns under /proc: the child is killed at 10 s if it hangs again.
    for (const [args, env, setting] of [
      [['--home', '/proc/lake-no-such/home', 'query', 'select 1'], {}, '--home or LAKE_HOME'],
      [['--home', join(root, 'a-file', 'home'), 'init'], {}, '--home or LAKE_HOME'],
      [['--home', join(root, 'a-file'), 'query', 'select 1'], {}, '--home or LAKE_HOME'],
      [
        ['config', 'set', 'base_url', 'http://127.0.0.1:1'],
        { LAKE_CONFIG_DIR: '/proc/lake-no-such/config' },
        'LAKE_CONFIG_DIR',
      ],
    ] as const) {
      const result = await runLake([...args], { env: { HOME: root, ...env }, timeoutMs: 10_000 });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain('folder_unusable');
      expect(result.stderr).toContain(`Choose another ${setting}`);
    }
  });

  it("a folder that is not yet a lake home keeps its modes and its files': only a lake's own home is tightened", async () => {
    // `--home /` or `--home /tmp` walked and chmodded everything beneath (and /dev/null, given as a home, lost 0666).
    const root = openFolder('lake-home-foreign', 'shared.txt', 'public');
    const result = await runLake(['--home', root, 'query', 'select 1 as n'], { env: { HOME: root } });
    expect(result.code, result.stderr).toBe(0);
    expect(mode(root)).toBe(0o755);
    expect(mode(join(root, 'shared.txt'))).toBe(0o644);
    expect(mode(join(root, 'public'))).toBe(0o755);
    // What lake made there is its user's alone all the same.
    expect(mode(join(root, 'metadata.sqlite'))).toBe(0o600);
  });

  it('an older home whose only lake file is its secrets key (metadata on PostgreSQL) is tightened all the same', async () => {
    const root = openFolder('lake-home-secrets-only', 'secrets.key', 'old');
    const result = await runLake(['--home', root, 'query', 'select 1 as n'], { env: { HOME: root } });
    expect(result.code, result.stderr).toBe(0);
    expect(mode(root)).toBe(0o700);
    expect(mode(join(root, 'secrets.key'))).toBe(0o600);
    expect(mode(join(root, 'old'))).toBe(0o700);
  });

  it('a key file that holds no usable key, or a damaged metadata file, is said with what to do, and nothing runs', async () => {
    const home = join(tempDir('lake-damaged'), 'home');
    expect(await runLake(['--home', home, 'query', 'select 1']).then((r) => r.code)).toBe(0);
    const expectRefused = async (setting: string): Promise<void> => {
      const out = await runLake(['--home', home, '--json', 'query', 'select 1']);
      expect(out.code, out.stderr).toBe(2);
      const { error } = JSON.parse(out.stderr) as { error: { code: string; message: string; hint: string } };
      expect(error.code).toBe('invalid_setting');
      expect(error.hint).toContain(setting);
      expect(out.stdout).toBe('');
    };
    // An empty or cut signing key would sign stream and download URLs with a key anyone can guess.
    for (const damaged of ['', 'zz\n', 'ab'.repeat(8), `${'0'.repeat(63)}x`]) {
      writeFileSync(join(home, 'signing.key'), damaged);
      await expectRefused('LAKE_SIGNING_KEY_FILE');
    }
    writeFileSync(join(home, 'signing.key'), 'ab'.repeat(32));
    expect((await runLake(['--home', home, 'query', 'select 1'])).code).toBe(0);
    writeFileSync(join(home, 'secrets.key'), 'not a key');
    await expectRefused('LAKE_SECRETS_KEY_FILE');
    writeFileSync(join(home, 'secrets.key'), 'cd'.repeat(32));
    expect((await runLake(['--home', home, 'query', 'select 1'])).code).toBe(0);
    writeFileSync(join(home, 'metadata.sqlite'), 'not a database');
    const broken = await runLake(['--home', home, '--json', 'query', 'select 1']);
    expect(broken.code, broken.stderr).toBe(1);
    const { error } = JSON.parse(broken.stderr) as { error: { code: string; message: string; hint: string } };
    expect(error.code).toBe('home_damaged');
    expect(error.message).toContain(join(home, 'metadata.sqlite'));
    expect(error.hint).toMatch(/backup/);
  });

  it('a damaged organization catalog: the command says where it logged what failed, and the log names the file', async () => {
    const home = join(tempDir('lake-damaged-catalog'), 'home');
    const made = await runLake(['--home', home, 'query', 'select 1']);
    expect(made.code, made.stderr).toBe(0);
    // Commands that succeed log nothing.
    expect(existsSync(join(home, 'lake.log'))).toBe(false);
    const catalog = readdirSync(join(home, 'lake')).map((org) =>
      join(home, 'lake', org, 'ducklake.sqlite'),
    )[0] as string;
    writeFileSync(catalog, 'not a database'.repeat(400));
    const broken = await runLake(['--home', home, '--json', 'catalog', 'ls']);
    expect(broken.code, broken.stderr).toBe(5);
    const { error } = JSON.parse(broken.stderr) as {
      error: { code: string; message: string; hint: string; request_id: string };
    };
    expect(error.code).toBe('internal_error');
    const log = join(home, 'lake.log');
    expect(error.message).toContain(`logged in ${log} under request id ${error.request_id}`);
    expect(error.hint).toMatch(/Find the request id in that log/);
    expect(mode(log)).toBe(0o600);
    const line = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text) as { level: string; request_id?: string; error?: string })
      .find((entry) => entry.request_id === error.request_id);
    expect(line?.level).toBe('error');
    expect(line?.error).toContain(`DuckLake catalog file ${catalog} is not a database lake can read`);
  });

  it('lake init creates the home with private files, and running it twice destroys nothing', async () => {
    const home = join(tempDir('lake-init'), 'home');
    const first = await runLake(['--home', home, 'init', '--json']);
    expect(first.code).toBe(0);
    const one = JSON.parse(first.stdout) as Record<string, any>;
    expect(one).toMatchObject({ object: 'init', home, created: true });
    expect(one.organization.id).toMatch(/^org_/);
    expect(one.token.secret).toMatch(/^pat_/);

    expect(mode(home)).toBe(0o700);
    expect(mode(join(home, 'owner.token'))).toBe(0o600);
    expect(mode(join(home, 'signing.key'))).toBe(0o600);
    const signingKey = statSync(join(home, 'signing.key')).mtimeMs;

    const second = await runLake(['--home', home, 'init', '--json']);
    const two = JSON.parse(second.stdout) as Record<string, any>;
    expect(two.created).toBe(false);
    expect(two.organization.id).toBe(one.organization.id);
    expect(two.token.secret).not.toBe(one.token.secret);
    expect(statSync(join(home, 'signing.key')).mtimeMs).toBe(signingKey);

    // Both tokens still work.
    for (const token of [one.token.secret, two.token.secret]) {
      const whoami = await runLake(['--home', home, '--token', token, 'whoami', '--json']);
      expect(whoami.code).toBe(0);
      expect((JSON.parse(whoami.stdout) as any).credential.name).toBe('lake init');
    }
  });

  it('stores only hashes of secrets in the metadata store, which runs in WAL mode with recorded migrations', async () => {
    const home = join(tempDir('lake-init'), 'home');
    const { token } = JSON.parse((await runLake(['--home', home, 'init', '--json'])).stdout) as {
      token: { secret: string };
    };
    const db = new Database(join(home, 'metadata.sqlite'), { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      const migrations = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as {
        version: number;
      }[];
      expect(migrations[0]?.version).toBe(1);
      const dump = JSON.stringify(db.prepare('SELECT * FROM credentials').all());
      expect(dump).not.toContain(token.secret);
      expect(dump).not.toContain(token.secret.slice(4, 20));
    } finally {
      db.close();
    }
  });

  it('several processes opening one new home at once agree on one organization and lose no writes', async () => {
    const home = join(tempDir('lake-race'), 'home');
    const runs = await Promise.all([
      ...Array.from({ length: 3 }, () => runLake(['--home', home, 'whoami', '--json'])),
      ...Array.from({ length: 3 }, (_, i) =>
        runLake(['--home', home, 'admin', 'pat', 'create', '--scopes', 'query:read', '--name', `p${i}`, '--json']),
      ),
    ]);
    for (const run of runs) expect(run, run.stderr).toMatchObject({ code: 0 });
    const orgs = new Set(
      runs.map((r) => {
        const body = JSON.parse(r.stdout) as Record<string, any>;
        return body.organization?.id ?? body.organization;
      }),
    );
    expect(orgs.size).toBe(1);

    const db = new Database(join(home, 'metadata.sqlite'), { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) AS n FROM organizations').get()).toEqual({ n: 1 });
      expect(db.prepare("SELECT count(*) AS n FROM users WHERE role = 'owner'").get()).toEqual({ n: 1 });
      expect(db.prepare("SELECT count(*) AS n FROM credentials WHERE name LIKE 'p%'").get()).toEqual({ n: 3 });
      expect(db.prepare('SELECT count(*) AS n FROM schema_migrations').get()).toEqual({ n: MIGRATIONS.length });
    } finally {
      db.close();
    }
  });

  it('replaces a lost owner credential instead of locking the owner out', async () => {
    const home = join(tempDir('lake-lost'), 'home');
    expect((await runLake(['--home', home, 'whoami'])).code).toBe(0);
    writeFileSync(join(home, 'owner.token'), 'garbage\n');
    const again = await runLake(['--home', home, 'whoami', '--json']);
    expect(again.code).toBe(0);
    expect(mode(join(home, 'owner.token'))).toBe(0o600);
  });

  it('admin commands mint a scoped PAT and a service key, each secret printed once', async () => {
    const home = join(tempDir('lake-admin'), 'home');
    const pat = await runLake([
      '--home',
      home,
      'admin',
      'pat',
      'create',
      '--scopes',
      'query:read,jobs:read',
      '--name',
      'analyst',
      '--expires-in-days',
      '7',
      '--json',
    ]);
    expect(pat.code).toBe(0);
    const patBody = JSON.parse(pat.stdout) as Record<string, any>;
    expect(patBody).toMatchObject({
      object: 'personal_access_token',
      name: 'analyst',
      scopes: ['query:read', 'jobs:read'],
    });
    expect(patBody.secret).toMatch(/^pat_/);

    const key = await runLake(['--home', home, 'admin', 'service-key', 'create', '--scopes', 'all', '--json']);
    const keyBody = JSON.parse(key.stdout) as Record<string, any>;
    expect(keyBody.object).toBe('service_key');
    expect(keyBody.secret).toMatch(/^nsk_/);
    expect(keyBody.user).toBeNull();

    const whoami = JSON.parse(
      (await runLake(['--home', home, '--token', keyBody.secret, 'whoami', '--json'])).stdout,
    ) as Record<string, any>;
    expect(whoami.principal_kind).toBe('service_key');

    const badScope = await runLake(['--home', home, 'admin', 'pat', 'create', '--scopes', 'query:write']);
    expect(badScope.code).toBe(2);
    expect(badScope.stderr).toContain('Unknown scope');
    expect((await runLake(['--home', home, 'admin', 'service-key', 'create'])).code).toBe(2);
  });
});
