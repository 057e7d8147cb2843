import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readOrCreatePrivateFile } from '../home/files.js';

/**
 * Source secrets at rest: AES-256-GCM with a 256-bit key kept in the home (mode 0600, made on first use). Each
 * value gets a fresh 96-bit nonce, and the source id is bound as associated data, so a ciphertext copied onto
 * another source does not decrypt. Stored as base64 of nonce, tag and ciphertext.
 */
export class SecretBox {
  private key: Buffer | undefined;

  constructor(private readonly keyFile: string) {}

  seal(sourceId: string, secrets: Record<string, string>): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.loadKey(), nonce);
    cipher.setAAD(Buffer.from(sourceId));
    const body = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final()]);
    return Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64');
  }

  open(sourceId: string, sealed: string): Record<string, string> {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.loadKey(), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(sourceId));
    decipher.setAuthTag(raw.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')) as Record<string, string>;
  }

  private loadKey(): Buffer {
    this.key ??= Buffer.from(readOrCreatePrivateFile(this.keyFile, () => randomBytes(32).toString('hex')).trim(), 'hex');
    return this.key;
  }
}
