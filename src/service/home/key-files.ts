import { randomBytes } from 'node:crypto';
import { readOrCreatePrivateFile } from './files.js';
import { HomeSettingError } from './home-setting-error.js';

/** A home's key: the file, the setting that names it, and what replacing it costs (said when it is unusable). */
export interface KeyFile {
  file: string;
  setting: 'LAKE_SIGNING_KEY_FILE' | 'LAKE_SECRETS_KEY_FILE';
  /** What a new key would cost, for the message that asks to restore this one. */
  replacing: string;
  /** The key's length in bytes: exactly (an AES-256 key) or at least (an HMAC key). */
  bytes: { exactly: number } | { atLeast: number };
}

/**
 * The key in a home's key file, made on first use (32 random bytes as hex, mode 0600). A file that holds anything
 * else (empty, cut short, another file named by the setting) is refused: read as hex it would be a shorter key or
 * none, and an empty HMAC key signs URLs anyone can forge.
 */
export function readOrCreateKey(key: KeyFile): Buffer {
  const text = readOrCreatePrivateFile(key.file, () => randomBytes(32).toString('hex')).trim();
  const bytes = /^(?:[0-9a-fA-F]{2})+$/.test(text) ? text.length / 2 : 0;
  const usable = 'exactly' in key.bytes ? bytes === key.bytes.exactly : bytes >= key.bytes.atLeast;
  if (!usable) {
    const digits = 'exactly' in key.bytes ? `${key.bytes.exactly * 2}` : `${key.bytes.atLeast * 2} or more`;
    throw new HomeSettingError(
      key.setting,
      `${key.file} holds no key lake can use: a key is ${digits} hexadecimal digits, as lake writes it, and this file is empty, cut short or another file. Restore the key file (every replica reads the same one); ${key.replacing}.`,
    );
  }
  return Buffer.from(text, 'hex');
}

/** The key that signs stream and download URLs (an HMAC key). */
export const signingKeyFile = (file: string): KeyFile => ({
  file,
  setting: 'LAKE_SIGNING_KEY_FILE',
  replacing: 'a new key (the file removed) only ends the stream and download links signed so far',
  bytes: { atLeast: 32 },
});

/** The key that seals sources' and sends' passwords at rest (AES-256). */
export const secretsKeyFile = (file: string): KeyFile => ({
  file,
  setting: 'LAKE_SECRETS_KEY_FILE',
  replacing:
    "a new key (the file removed) cannot open the passwords sealed so far: every source's and send's password would have to be given again",
  bytes: { exactly: 32 },
});
