import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { CredentialStore } from '../auth/credentials.js';
import { Directory, type Organization, type User } from '../auth/directory.js';
import { SCOPES } from '../auth/scopes.js';
import { openMetadataDb, writeTransaction, type MetadataDb } from '../store/database.js';
import { ensurePrivateDir, readFileIfExists, readOrCreatePrivateFile, tightenHome, writePrivateFile } from './files.js';

/** Where everything of one home lives. */
export interface HomePaths {
  root: string;
  metadataDb: string;
  ownerToken: string;
  signingSecret: string;
}

export function homePaths(root: string): HomePaths {
  return {
    root,
    metadataDb: join(root, 'metadata.sqlite'),
    ownerToken: join(root, 'owner.token'),
    signingSecret: join(root, 'signing.key'),
  };
}

export interface Home {
  paths: HomePaths;
  db: MetadataDb;
  organization: Organization;
  owner: User;
  /** The owner's credential for local mode; kept in the home, mode 0600. */
  ownerToken: string;
  /** Per-home key for signing download URLs; never leaves the home. */
  signingSecret: Buffer;
  credentials: CredentialStore;
  directory: Directory;
  close(): void;
}

const OWNER_CREDENTIAL_KEY = 'owner_credential_id';

/**
 * Opens a home, creating it on first use: directory (0700), metadata store, organization, owner, the owner's local
 * credential and the signing secret. Every step is safe when several processes open the same new home at once:
 * database work happens under the write lock, and files are published atomically.
 */
export function openHome(root: string): Home {
  const paths = homePaths(root);
  // Everything this process creates from here on (SQLite's -wal and -shm, DuckDB's catalogs and spill files,
  // Parquet parts, results; also in the query workers it starts) is its user's alone: 0600 files, 0700 folders.
  process.umask(0o077);
  ensurePrivateDir(root);
  tightenHome(root);
  const signingSecret = Buffer.from(
    readOrCreatePrivateFile(paths.signingSecret, () => randomBytes(32).toString('hex')).trim(),
    'hex',
  );
  const db = openMetadataDb(paths.metadataDb);
  try {
    const directory = new Directory(db);
    const credentials = new CredentialStore(db);
    const { organization, owner, ownerToken } = writeTransaction(db, () => {
      const organization = directory.firstOrganization() ?? directory.createOrganization('Local lake');
      const owner = directory.owner(organization.id) ?? directory.createUser(organization.id, 'Owner', 'owner');
      return { organization, owner, ownerToken: ensureOwnerCredential(db, paths, credentials, organization, owner) };
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
      close: () => db.close(),
    };
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Keeps a working owner credential in the home. If the token file is missing or no longer matches a live
 * credential (deleted by hand, revoked), a new one replaces it, so local mode never locks its owner out.
 * Runs inside the bootstrap's write transaction.
 */
function ensureOwnerCredential(
  db: MetadataDb,
  paths: HomePaths,
  credentials: CredentialStore,
  organization: Organization,
  owner: User,
): string {
  const setting = db.prepare('SELECT value FROM home_settings WHERE key = ?').get(OWNER_CREDENTIAL_KEY) as
    | { value: string }
    | undefined;
  const existing = readFileIfExists(paths.ownerToken)?.trim();
  if (setting && existing && credentials.isLive(setting.value, existing)) return existing;

  if (setting) credentials.revoke(setting.value);
  const issued = credentials.issue({
    kind: 'pat',
    organizationId: organization.id,
    userId: owner.id,
    name: 'local owner (this home)',
    scopes: SCOPES,
  });
  db.prepare('INSERT OR REPLACE INTO home_settings (key, value) VALUES (?, ?)').run(OWNER_CREDENTIAL_KEY, issued.record.id);
  // Written before the transaction commits: a crash in between leaves a token that matches nothing, which the
  // check above replaces on the next open.
  writePrivateFile(paths.ownerToken, `${issued.secret}\n`);
  return issued.secret;
}
