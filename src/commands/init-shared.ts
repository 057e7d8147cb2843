import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { ensurePrivateDir, readOrCreatePrivateFile } from '../service/home/files.js';
import type { HomeOptions } from '../service/home/home.js';

/**
 * The options of a home on a shared PostgreSQL store: the key files named in the environment, or new ones in the
 * home (0600) that the operator copies to every replica. The secrets key stays a file: it is never written into
 * the database whose secrets it seals.
 */
export function sharedStoreOptions(homeDir: string, options: HomeOptions): HomeOptions {
  ensurePrivateDir(homeDir);
  const keyFile = (given: string | undefined, name: string): string => {
    const file = resolve(given ?? join(homeDir, name));
    readOrCreatePrivateFile(file, () => randomBytes(32).toString('hex'));
    return file;
  };
  return {
    ...options,
    signingKeyFile: keyFile(options.signingKeyFile, 'signing.key'),
    secretsKeyFile: keyFile(options.secretsKeyFile, 'secrets.key'),
  };
}
