import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AuditLog } from '../auth/audit-log.js';
import { AuditStore } from '../auth/audit-store.js';
import { CredentialStore } from '../auth/credentials.js';
import { Directory, type Organization, type User } from '../auth/directory.js';
import { SCOPES } from '../auth/scopes.js';
import { openMetadataDb, isPostgresUrl } from '../store/database.js';
import { lock, type MetadataDb } from '../store/metadata-db.js';
import { ensurePrivateDir, readFileIfExists, readOrCreatePrivateFile, tightenHome, writePrivateFile } from './files.js';
import { SettingsStore } from './settings-store.js';
import { HomeSettingError } from './home-setting-error.js';
import { readOrCreateKey, secretsKeyFile, signingKeyFile } from './key-files.js';
import { HomeDamaged, isDamagedDatabase } from './home-damaged.js';
import { MetadataStoreUnreachable, metadataStoreName } from './metadata-store-error.js';
import { MetadataUnavailableError, isConnectionFailure } from '../store/unavailable.js';
import { redactSecrets } from '../core/redact.js';
import { REAL_CLOCK } from '../core/clock.js';
import { isProgrammingError } from '../core/errors.js';
import {
  cacheFromEnv,
  DEFAULT_CACHE_BYTES,
  objectStoreFromEnv,
  type ObjectStoreSettings,
} from '../files/object-store-settings.js';

/** Where everything of one home lives. */
export interface HomePaths {
  root: string;
  metadataDb: string;
  ownerToken: string;
  signingSecret: string;
  secretsKey: string;
  /**
   * Lake tables and query results: the home itself, or a directory every replica shares; with an object store,
   * the local cache of its files (LAKE_CACHE_DIR).
   */
  data: string;
}

/**
 * Where a home keeps what replicas must share. Unset, everything is in the home (one machine, zero
 * configuration). For replicas: the PostgreSQL URL they share, a data directory they all mount, and the two keys
 * supplied to each as files (the secrets key is never stored in the database whose secrets it seals).
 */
export interface HomeOptions {
  metadataUrl?: string;
  dataDir?: string;
  signingKeyFile?: string;
  secretsKeyFile?: string;
  /** LAKE_DATA_URL: the object store that keeps lake's files instead of a directory. */
  objectStore?: ObjectStoreSettings;
  /** LAKE_CACHE_DIR: where the object store's files are cached (default: cache in the home). */
  cacheDir?: string;
  /** LAKE_CACHE_MB in bytes. */
  cacheMaxBytes?: number;
}

/** The shared-store settings from the environment: LAKE_METADATA_URL, LAKE_DATA_DIR and the two key files. */
export function homeOptionsFromEnv(env: Record<string, string | undefined>): HomeOptions {
  const value = (name: string): string | undefined =>
    env[name] === undefined || env[name] === '' ? undefined : env[name];
  const metadataUrl = value('LAKE_METADATA_URL');
  if (metadataUrl !== undefined && !isPostgresUrl(metadataUrl)) {
    throw new Error('LAKE_METADATA_URL must be a PostgreSQL URL (postgres://user@host:5432/database).');
  }
  const objectStore = objectStoreFromEnv(env);
  const cache = cacheFromEnv(env);
  return {
    metadataUrl,
    dataDir: value('LAKE_DATA_DIR'),
    signingKeyFile: value('LAKE_SIGNING_KEY_FILE'),
    secretsKeyFile: value('LAKE_SECRETS_KEY_FILE'),
    ...(objectStore ? { objectStore, cacheMaxBytes: cache.maxBytes } : {}),
    ...(objectStore && cache.dir !== undefined ? { cacheDir: cache.dir } : {}),
  };
}

export function homePaths(root: string, options: HomeOptions = {}): HomePaths {
  return {
    root,
    metadataDb: join(root, 'metadata.sqlite'),
    ownerToken: join(root, 'owner.token'),
    signingSecret: options.signingKeyFile ? resolve(options.signingKeyFile) : join(root, 'signing.key'),
    secretsKey: options.secretsKeyFile ? resolve(options.secretsKeyFile) : join(root, 'secrets.key'),
    data: options.objectStore
      ? resolve(options.cacheDir ?? join(root, 'cache'))
      : options.dataDir
        ? resolve(options.dataDir)
        : root,
  };
}

export interface Home {
  paths: HomePaths;
  db: MetadataDb;
  organization: Organization;
  owner: User;
  /** The owner's credential for local mode; kept in the home, mode 0600. */
  ownerToken: string;
  /** Key for signing download and stream URLs; the same on every replica. */
  signingSecret: Buffer;
  credentials: CredentialStore;
  directory: Directory;
  /** LAKE_METADATA_URL when the metadata lives in PostgreSQL (no source or send may reach that database). */
  metadataUrl?: string;
  /** Where lake's files are kept when not in a directory, and the bytes its local cache may hold. */
  objectStore?: { settings: ObjectStoreSettings; cacheMaxBytes: number };
  close(): Promise<void>;
}

const OWNER_CREDENTIAL_KEY = 'owner_credential_id';

/** A store shared by replicas needs keys that every replica has, not ones each would make for itself. */
function assertSharedKeys(options: HomeOptions): void {
  for (const [file, variable] of [
    [options.signingKeyFile, 'LAKE_SIGNING_KEY_FILE'],
    [options.secretsKeyFile, 'LAKE_SECRETS_KEY_FILE'],
  ] as const) {
    if (!file)
      throw new HomeSettingError(
        variable,
        `A PostgreSQL metadata store is shared by replicas: set ${variable} to a key file every replica reads (lake init --metadata-url writes one).`,
      );
    if (!existsSync(file))
      throw new HomeSettingError(
        variable,
        `${variable} names ${file}, which does not exist. Copy the key file that lake init wrote to every replica.`,
      );
  }
}

/**
 * Opens a home, creating it on first use: directory (0700), metadata store, organization, owner, the owner's local
 * credential and the signing secret. Every step is safe when several processes (or replicas on one PostgreSQL
 * store) open it at once: the bootstrap holds one lock, and files are published atomically.
 */
export async function openHome(root: string, options: HomeOptions = {}): Promise<Home> {
  // Checked where the setting is read; never taken for "no shared store" here, which would make a local home.
  if (options.metadataUrl !== undefined && !isPostgresUrl(options.metadataUrl))
    throw new Error("A home's metadata URL must be a PostgreSQL URL.");
  const shared = options.metadataUrl !== undefined;
  if (shared) assertSharedKeys(options);
  const paths = homePaths(root, options);
  // Everything this process creates from here on (SQLite's -wal and -shm, DuckDB's catalogs and spill files,
  // Parquet parts, results; also in the query workers it starts) is its user's alone: 0600 files, 0700 folders.
  process.umask(0o077);
  ensurePrivateDir(root);
  tightenHome(root);
  if (paths.data !== root) ensurePrivateDir(paths.data);
  const signingSecret = readOrCreateKey(signingKeyFile(paths.signingSecret));
  // The secrets key is read when a source's secrets are first sealed or opened; checked here, so a damaged one stops
  // the command or the server at start instead of failing each request that needs it.
  readOrCreateKey(secretsKeyFile(paths.secretsKey));
  const db = shared ? await openSharedStore(options.metadataUrl as string) : await openLocalStore(paths.metadataDb);
  try {
    const directory = new Directory(db);
    const credentials = new CredentialStore(db);
    const settings = new SettingsStore(db);
    // On a shared store each home has its own local owner credential, named by a key only this home knows.
    const ownerKey = shared ? `${OWNER_CREDENTIAL_KEY}:${homeId(paths)}` : OWNER_CREDENTIAL_KEY;
    const { organization, owner, ownerToken } = await db.transaction(lock.bootstrap(), async () => {
      const organization = (await directory.firstOrganization()) ?? (await directory.createOrganization('Local lake'));
      const owner =
        (await directory.owner(organization.id)) ?? (await directory.createUser(organization.id, 'Owner', 'owner'));
      return {
        organization,
        owner,
        ownerToken: await ensureOwnerCredential(
          {
            settings,
            key: ownerKey,
            paths,
            credentials,
            audit: new AuditLog(new AuditStore(db), directory, REAL_CLOCK),
          },
          organization,
          owner,
        ),
      };
    });
    return {
      paths,
      db,
      organization,
      owner,
      ownerToken,
      signingSecret,
      credentials,
      directory,
      ...(shared ? { metadataUrl: options.metadataUrl } : {}),
      ...(options.objectStore
        ? {
            objectStore: {
              settings: options.objectStore,
              cacheMaxBytes: options.cacheMaxBytes ?? DEFAULT_CACHE_BYTES,
            },
          }
        : {}),
      close: () => db.close(),
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}

/**
 * Opens the PostgreSQL metadata store: one lake cannot reach is said as such, and one that refuses it (no such
 * database, a wrong password, a privilege missing, an option it rejects) as LAKE_METADATA_URL to fix. What lake's own
 * code got wrong (a TypeError, …) stays what it is.
 */
async function openSharedStore(metadataUrl: string): Promise<MetadataDb> {
  try {
    return await openMetadataDb(metadataUrl);
  } catch (error) {
    // (The guard's answer kept as a boolean: as a type guard its `false` would rule out every Error.)
    const ownBug: boolean = isProgrammingError(error);
    if (!(error instanceof Error) || ownBug) throw error;
    const where = metadataStoreName(metadataUrl);
    if (isConnectionFailure(error)) {
      const cause = error instanceof MetadataUnavailableError && error.cause instanceof Error ? error.cause : error;
      throw new MetadataStoreUnreachable(
        `lake cannot reach its metadata store at ${where} (${redactSecrets(cause.message)}).`,
        { cause: error },
      );
    }
    throw new HomeSettingError(
      'LAKE_METADATA_URL',
      `The metadata store at ${where} refused lake: ${redactSecrets(error.message)}.`,
    );
  }
}

/** Opens the home's own SQLite metadata file: one that is not a database, or a damaged one, is said as such. */
async function openLocalStore(file: string): Promise<MetadataDb> {
  try {
    return await openMetadataDb(file);
  } catch (error) {
    if (!isDamagedDatabase(error)) throw error;
    throw new HomeDamaged(
      file,
      `The home's metadata file ${file} is not a database lake can read (${(error as Error).message}): it is damaged, or another file took its place.`,
    );
  }
}

/** A random name for this home, made once: what tells its records apart on a store that several homes share. */
function homeId(paths: HomePaths): string {
  return readOrCreatePrivateFile(join(paths.root, 'home.id'), () => randomBytes(8).toString('hex')).trim();
}

/**
 * Keeps a working owner credential in the home (the token file local commands read). If the file is missing or no
 * longer matches a live credential (deleted by hand, revoked), or the credential lacks a scope, a new one replaces
 * it, so local mode never locks its owner out. Runs inside the bootstrap's transaction, and records each token made
 * or revoked in the audit log there, as the home's administrator: no token of a home exists unrecorded.
 */
async function ensureOwnerCredential(
  home: { settings: SettingsStore; key: string; paths: HomePaths; credentials: CredentialStore; audit: AuditLog },
  organization: Organization,
  owner: User,
): Promise<string> {
  const { settings, key, paths, credentials, audit } = home;
  const recorded = await settings.get(key);
  const existing = readFileIfExists(paths.ownerToken)?.trim();
  // A token made before a scope existed is replaced too, so the home's own owner can always do everything.
  const current = recorded && existing ? await credentials.liveRecord(recorded, existing) : undefined;
  if (current && SCOPES.every((scope) => current.scopes.includes(scope))) return existing as string;

  const replaced = recorded ? await credentials.get(recorded) : undefined;
  if (replaced && (await credentials.revoke(replaced.id))) await audit.credentialRevoked(replaced);
  const issued = await credentials.issue({
    kind: 'pat',
    organizationId: organization.id,
    userId: owner.id,
    name: 'local owner (this home)',
    scopes: SCOPES,
  });
  await audit.credentialCreated(issued.record);
  await settings.set(key, issued.record.id);
  // Written before the transaction commits: a crash in between leaves a token that matches nothing, which the
  // check above replaces on the next open.
  writePrivateFile(paths.ownerToken, `${issued.secret}\n`);
  return issued.secret;
}
