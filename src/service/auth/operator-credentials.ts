import { LakeServiceError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { MetadataDb } from '../store/metadata-db.js';
import { LAST_USED_PRECISION_SECONDS } from './credentials.js';
import { hashSecret, looksLikeSecret, newSecret, secretHint } from './secrets.js';

/**
 * The service operator: whoever runs `lake serve` for many organizations. Its tokens (`opr_…`, from `lake init`)
 * belong to no organization; they create, rename and deactivate organizations and their first owners, and read
 * nothing of any organization's data.
 */
export interface OperatorPrincipal {
  kind: 'operator';
  credentialId: string;
  /** The API request it came in (what the audit log records). */
  origin?: { requestId: string; clientAddress: string };
}

export interface IssuedOperatorToken {
  id: string;
  name: string;
  created: number;
  /** The plaintext secret: returned once, here, and never stored. */
  secret: string;
}

export interface OperatorTokenRecord {
  id: string;
  name: string;
  /** The secret's last four characters. */
  hint: string;
  created: number;
  lastUsed: number | null;
  revoked: number | null;
}

interface OperatorRow {
  id: string;
  secret_hash: string;
  last_used: number | null;
  revoked: number | null;
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export class OperatorCredentials {
  constructor(private readonly db: MetadataDb) {}

  async issue(name: string): Promise<IssuedOperatorToken> {
    const secret = newSecret('opr');
    const token = { id: newId('opt'), name, created: nowSeconds(), secret };
    await this.db.run(
      'INSERT INTO operator_credentials (id, name, secret_hash, secret_hint, created) VALUES (?, ?, ?, ?, ?)',
      [token.id, name, hashSecret(secret), secretHint(secret), token.created],
    );
    return token;
  }

  /** True when a live token with this id was revoked (it fails at once, on every replica). */
  async revoke(id: string): Promise<boolean> {
    const result = await this.db.run('UPDATE operator_credentials SET revoked = ? WHERE id = ? AND revoked IS NULL', [
      nowSeconds(),
      id,
    ]);
    return result.changes > 0;
  }

  /** Every operator token, newest first, never a secret. */
  async list(): Promise<OperatorTokenRecord[]> {
    const rows = await this.db.all<OperatorTokenRecord & { secret_hint: string; last_used: number | null }>(
      'SELECT id, name, secret_hint, created, last_used, revoked FROM operator_credentials ORDER BY id DESC',
    );
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      hint: row.secret_hint,
      created: Number(row.created),
      lastUsed: row.last_used === null ? null : Number(row.last_used),
      revoked: row.revoked === null ? null : Number(row.revoked),
    }));
  }

  /** The operator a bearer secret stands for; the secret never appears in an error. */
  async authenticate(secret: string): Promise<OperatorPrincipal> {
    if (!looksLikeSecret(secret, ['opr']))
      throw new LakeServiceError('invalid_credentials', 'The credential is not valid: no such operator token exists.');
    const row = await this.db.get<OperatorRow>(
      'SELECT id, secret_hash, last_used, revoked FROM operator_credentials WHERE secret_hash = ?',
      [hashSecret(secret)],
    );
    if (!row)
      throw new LakeServiceError('invalid_credentials', 'The credential is not valid: no such operator token exists.');
    if (row.revoked !== null)
      throw new LakeServiceError(
        'credentials_revoked',
        'This operator token was revoked. Make a new one with lake init.',
      );
    const now = nowSeconds();
    // As for other credentials: a minute's precision, so a read is not a write every time.
    if (row.last_used === null || now - Number(row.last_used) >= LAST_USED_PRECISION_SECONDS)
      await this.db.run('UPDATE operator_credentials SET last_used = ? WHERE id = ?', [now, row.id]);
    return { kind: 'operator', credentialId: row.id };
  }
}
