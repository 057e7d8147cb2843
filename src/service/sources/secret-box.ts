import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { LakeServiceError } from '../core/errors.js';
import { readOrCreateKey, type KeyFile } from '../home/key-files.js';

/**
 * Source secrets at rest: AES-256-GCM with a 256-bit key kept in the home (mode 0600, made on first use). Each
 * value gets a fresh 96-bit nonce, and the source id is bound as associated data, so a ciphertext copied onto
 * another source does not decrypt. Stored as base64 of nonce, tag and ciphertext.
 */
export class SecretBox {
  private key: Buffer | undefined;

  constructor(private readonly keyFile: KeyFile) {}

  seal(sourceId: string, secrets: Record<string, string>): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.loadKey(), nonce);
    cipher.setAAD(Buffer.from(sourceId));
    const body = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final()]);
    return Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64');
  }

  /**
   * The secrets sealed for this id. What does not open was sealed with another key: on replicas, one whose
   * LAKE_SECRETS_KEY_FILE is not the file the others read. Another replica may well open it, so the caller is told
   * to retry, and the operator what to fix.
   */
  open(sourceId: string, sealed: string): Record<string, string> {
    const key = this.loadKey();
    try {
      const raw = Buffer.from(sealed, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(sourceId));
      decipher.setAuthTag(raw.subarray(12, 28));
      return JSON.parse(
        Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8'),
      ) as Record<string, string>;
    } catch {
      throw new LakeServiceError(
        'service_unavailable',
        `The stored secrets of ${sourceId} do not open with this server's secrets key: it is not the key that sealed them. Every replica must read the same LAKE_SECRETS_KEY_FILE; an operator should check this one's.`,
        { retryAfterSeconds: 2 },
      );
    }
  }

  private loadKey(): Buffer {
    this.key ??= readOrCreateKey(this.keyFile);
    return this.key;
  }
}
